"""Instructions per message, counted by callgrind: the loop benchmark's figures in a unit that does
not move with the machine's load (wall-clock p50s on a shared machine do, by 2× and more).

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.ours \
        .venv/bin/python bench/loop_instructions.py ours 200
    (then: ours 200, floor 1000, plain 2000 with .venv/bin/python; qwen 200 with .venv-peers/bin/python)

Each case is warmed up (30 messages), then callgrind counts only its `n` messages (switched on and
off around them with callgrind_control); the count is the "Collected" line of valgrind's summary,
divided by `n`. The cases are the four of `make bench-peers`: our loop's no-op message
(loop_overhead.py), its statements replayed through plain sqlite3 (loop_floor.py), the
hand-written loop and Qwen-Agent (bench/peers/). Issue 37's goal in these units: ours minus floor
against Qwen-Agent minus the hand-written loop. Needs valgrind (Debian's package).

Work done per second rather than per message is left out of our loop's count: a running answer's
look for a stop asked elsewhere (every second, on the heartbeat thread), its heartbeat (every 10 s)
and the tool settings' re-read (every 5 s). Under valgrind a message takes thousands of times its
normal time, and longer the more loaded the machine, so these came due every message or two and
made the count grow with the load (4.3 M a message at load 14, 6.8 M at load 25, the same code); on
a quiet machine outside valgrind they come once in hundreds or thousands of messages.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def counted(messages, n: int) -> None:
    """`messages(k)` runs k messages: 30 to warm up, then `n` counted."""
    messages(30)
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    messages(n)
    subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)


def ours_or_floor(case: str, n: int) -> None:
    from _common import seeded_app
    from loop_floor import recorded_message, replay
    from loop_overhead import Noop, measure

    from inventory_ai.assistant import recovery, registry
    from inventory_ai.assistant.extension import manager
    from inventory_ai.extensions import db
    from inventory_ai.models import User

    logging.disable(logging.INFO)
    app = seeded_app()
    with app.app_context():
        manager().registry.register(Noop())
        # Per second, not per message (the module's note): never due while counting.
        registry.SETTINGS_CHECK_SECONDS = recovery.STOP_SECONDS = float("inf")
        manager().heartbeat_seconds = float("inf")
        user = db.session.query(User).filter_by(username="staff").one()
        if case == "ours":
            counted(lambda k: measure(app, user, "noop", {}, k), n)
            return
        measure(app, user, "noop", {}, 20)
        recorded = recorded_message(app, user)
        db.session.remove()
        connection = db.engine.raw_connection().driver_connection
    counted(lambda k: replay(connection, recorded, k), n)


def peer(case: str, n: int) -> None:
    sys.path.insert(0, str(HERE / "peers"))
    if case == "plain":
        import plain_loop

        counted(lambda k: [plain_loop.run("bench") for _ in range(k)], n)
        return
    import qwen_agent_loop
    from qwen_agent.agents import FnCallAgent

    agent = FnCallAgent(function_list=["noop"], llm=qwen_agent_loop.Scripted({"model": "scripted"}))
    counted(lambda k: [list(agent.run([{"role": "user", "content": "bench"}])) for _ in range(k)], n)


def main() -> None:
    case, n = sys.argv[1], int(sys.argv[2])
    if case in ("ours", "floor"):
        ours_or_floor(case, n)
    elif case in ("plain", "qwen"):
        peer(case, n)
    else:
        raise SystemExit("ours, floor, plain or qwen")


if __name__ == "__main__":
    main()
