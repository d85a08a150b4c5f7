"""Server CPU a chat message costs, and where it goes: in process, so the load cannot move it.

    .venv/bin/python bench/chat_cpu.py [messages] [--database postgresql]
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.chat \
        .venv/bin/python bench/chat_cpu.py --instructions [messages]

`POST /api/v1/chat {"message": "hello"}` with a bearer token through the whole WSGI app (the test
client in this process, as gunicorn calls it), production settings (JSON log lines, written to a
file as gunicorn's stderr is), the real dashscope SDK over HTTP to tests/support/dashscope_stub.py in
its own process answering at once, 64 users in turn: what `chat_load.py` sends, without gunicorn,
wrk or the stub's 200 ms. Reported: process CPU a message (the best of 5 batches, every thread of
this process), then the parts of a message by thread CPU time under cProfile (deterministic
profiling inflates small calls, so the parts are shares, not milliseconds; and a bearer token is
checked against the database every 5 s, so the slower profiled batch re-reads each token more often
than the load does). `--instructions`
counts, under callgrind, only the `messages` measured (switched on and off with callgrind_control):
the figure to compare builds by on a busy machine; the count is valgrind's "Collected" line divided
by `messages`. `--cached-tokens` checks every measured message's token from the cache, with no
"last used" stamp, as nearly all are under load (one message in about 22 re-reads its token at
64 clients, one in about 270 stamps it): under callgrind a message runs about 50x slower, so
without it most tokens outlive the cache's 5 s and a minute's stamp between two of their user's
messages, and how many do moves the count by about 4 % from one run to the next.
`--instructions` also keeps out of the count the work due per second rather than per message, as
loop_instructions.py does: a running answer's look for a stop asked elsewhere (every second, on the
heartbeat thread), its heartbeat (every 10 s) and the tool settings' re-read (every 5 s). Under
callgrind a message takes about 50x its time, longer the more loaded the machine, so that work came
due far more often than under load and the count grew with the run's wall clock: the same build
counted 10.35 M a message in an 8-minute run, and a build with fewer Python calls 10.86 M in a
15-minute run on a busier machine.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys
import time

from _server import USERS, deployed

WARM_UP = 300

# The parts of a message, by the function that does each (file ending, function name); what is
# not in one of them is Flask, werkzeug, flask-smorest, the response's JSON and the loop's glue.
PARTS = [
    ("bearer token (auth)", "auth/pipeline.py", "_load_from_token"),
    ("token scopes", "auth/pipeline.py", "check_token_scopes"),
    ("rate limits (before)", "flask_limiter/_extension.py", "_check_request_limit"),
    ("rate limits (route)", "flask_limiter/_extension.py", "__evaluate_limits"),
    ("rate limit headers", "flask_limiter/_extension.py", "__inject_headers"),
    ("daily token budget", "services/usage.py", "tokens_today"),
    ("model providers (factory)", "assistant/model_chain.py", "providers"),
    ("message intake (rows)", "assistant/intake.py", "take_message"),
    ("model call (SDK, HTTP)", "providers/dashscope.py", "stream"),
    ("answer's end (rows)", "assistant/answering.py", "finish"),
    ("access log line", "inventory_ai/logging.py", "_echo"),
    ("request id, log context", "inventory_ai/logging.py", "_bind"),
    ("metrics", "inventory_ai/observability.py", "_count"),
    ("security headers", "flask_talisman/talisman.py", "_set_response_headers"),
]


def main() -> None:
    args = sys.argv[1:]
    kind = args.pop(args.index("--database") + 1) if "--database" in args else "sqlite"
    instructions = "--instructions" in args
    cached_tokens = "--cached-tokens" in args
    args = [a for a in args if a not in ("--database", "--instructions", "--cached-tokens")]
    n = int(args[0]) if args else 500
    with deployed(kind, ("--delay", "0"), 1, 4) as app:
        app.server.terminate()  # only its database, users and stub are wanted: the app runs here
        app.server.wait()
        os.environ.update(app.env)
        os.chdir(app.folder)
        log = os.open(app.folder / "app.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        saved_stderr = os.dup(2)
        os.dup2(log, 2)  # the log lines go to a file, as gunicorn's stderr does
        if cached_tokens:
            from datetime import timedelta

            from inventory_ai.auth import tokens

            tokens.TOKEN_CHECK_SECONDS = 24 * 3600.0  # the token the warm-up read stays good
            tokens.LAST_USED_RESOLUTION = timedelta(days=1)  # and stamped
        try:
            report = measure(app, kind, n, instructions)
        finally:
            os.dup2(saved_stderr, 2)
        print(report)


def measure(app, kind: str, n: int, instructions: bool) -> str:
    from inventory_ai import create_app

    server = create_app()
    client = server.test_client()
    if instructions:  # per second, not per message (the module's note): never due while counting
        from inventory_ai.assistant import recovery, registry
        from inventory_ai.assistant.extension import manager

        registry.SETTINGS_CHECK_SECONDS = recovery.STOP_SECONDS = float("inf")
        with server.app_context():
            manager().heartbeat_seconds = float("inf")

    def ask(count: int) -> None:
        for i in range(count):
            headers = {"Authorization": f"Bearer {app.tokens[i % USERS]}", "X-Forwarded-Proto": "https"}
            reply = client.post("/api/v1/chat", json={"message": "hello"}, headers=headers)
            assert reply.status_code == 200 and b'"completed"' in reply.data, reply.data[:300]

    ask(WARM_UP)
    if instructions:
        toggle = ["callgrind_control", "-i"]
        subprocess.run([*toggle, "on", str(os.getpid())], check=True, capture_output=True)
        ask(n)
        subprocess.run([*toggle, "off", str(os.getpid())], check=True, capture_output=True)
        return f"{n} messages counted: divide valgrind's Collected line by {n}"
    cpu = []
    for _ in range(5):
        started = time.process_time()
        ask(n)
        cpu.append((time.process_time() - started) * 1000 / n)
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    ask(n)
    profile.disable()
    stats = pstats.Stats(profile).stats
    whole = max(ct for (f, _, name), (_, _, _, ct, _) in stats.items() if name == "wsgi_app")
    lines = [
        f"POST /api/v1/chat in process, {kind}, {n} messages a batch, the stub answering at once\n",
        f"process CPU a message, best of 5 batches: {min(cpu):.2f} ms (all 5: "
        + ", ".join(f"{c:.2f}" for c in cpu)
        + ")\n",
        "| part | share of the request's CPU (cProfile, thread time) |",
        "|---|---|",
    ]
    for label, ending, function in PARTS:
        spent = sum(
            ct for (f, _, name), (_, _, _, ct, _) in stats.items() if f.endswith(ending) and name == function
        )
        lines.append(f"| {label} | {spent / whole:.1%} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
