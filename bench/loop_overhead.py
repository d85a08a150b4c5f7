"""Time per user message through ToolExecutionManager with one tool round, model time excluded.

    .venv/bin/python bench/loop_overhead.py [messages]

A scripted model answers instantly: first a tool call, then the final text. Everything else is real:
the user message, the assistant message, the round, the call, its audit event and the model usage
rows are written to the seeded SQLite database (WAL, synchronous=NORMAL). Reported: p50/p95 per
message and SQL statements per message, for a no-op tool (the loop's own cost) and for
search_materials (a realistic read).
"""

from __future__ import annotations

import logging
import sys
import time

from _common import percentile, seeded_app
from sqlalchemy import event

from inventory_ai.assistant.setup import manager
from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


class Noop(ToolExecutor):
    name = "noop"
    labels = help = ("测试", "test")
    description = "does nothing"
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, arguments, context):
        return {"ok": True}


def measure(app, user, tool: str, arguments: dict, n: int) -> tuple[list[float], float]:
    statements = 0

    def count(*_args):
        nonlocal statements
        statements += 1

    event.listen(db.engine, "before_cursor_execute", count)
    timings = []
    try:
        for i in range(n):
            use(app, ScriptedProvider(calls(call(tool, arguments, f"call_{i}")), answer("done")))
            started = time.perf_counter()
            turn = manager().prepare_message(db.session, user, "bench", None)
            for _ in manager().run(db.session, turn):
                pass
            timings.append((time.perf_counter() - started) * 1000)
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    return timings, statements / n


def main() -> None:
    logging.disable(logging.INFO)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    app = seeded_app()
    with app.app_context():
        manager().registry.register(Noop())
        user = db.session.query(User).filter_by(username="staff").one()
        print(f"{n} messages per case, seeded SQLite (WAL, synchronous=NORMAL), scripted model (0 ms)\n")
        print("| case | p50 ms | p95 ms | SQL statements per message |\n|---|---|---|---|")
        for label, tool, arguments in (
            ("one round, no-op tool", "noop", {}),
            ("one round, search_materials 面粉", "search_materials", {"keyword": "面粉"}),
        ):
            measure(app, user, tool, arguments, 20)  # warm up
            timings, sql = measure(app, user, tool, arguments, n)
            print(f"| {label} | {percentile(timings, 50):.2f} | {percentile(timings, 95):.2f} | {sql:.0f} |")


if __name__ == "__main__":
    main()
