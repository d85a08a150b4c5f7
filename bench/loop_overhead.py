"""Time per user message through ToolExecutionManager with one tool round, model time excluded.

    .venv/bin/python bench/loop_overhead.py [messages]

A scripted model answers instantly: first a tool call, then the final text. Everything else is real:
the user message, the assistant message, the round, the call, its audit event and the model usage
rows are written to the seeded SQLite database (WAL, synchronous=NORMAL). Reported: p50/p95 per
message, SQL statements per message, and how long a message holds SQLite's single write lock (its
writer turns, writer_turns.WriterTurns): under load that time, summed over every message, is what the
whole server can spend writing, so it sets SQLite's ceiling in messages a second. For a no-op tool
(the loop's own cost) and for search_materials (a realistic read).
"""

from __future__ import annotations

import logging
import sys
import time

from _common import percentile, seeded_app
from sqlalchemy import event

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.writer_turns import WriterTurns
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


class Noop(ToolExecutor):
    name = "noop"
    labels = help = ("测试", "test")
    description = "does nothing"
    bounded = True  # as the domain's reads: nothing in it can outlast its timeout
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, arguments, context):
        return {"ok": True}


class HeldTurns:
    """Time from each writer turn had to its giving back (this process is the only writer)."""

    def __init__(self):
        self.held = 0.0
        self._since = None
        self._take, self._let_go = WriterTurns.take, WriterTurns._let_go

    def __enter__(self):
        def take(turns, connection):
            had = self._take(turns, connection)
            if had:
                self._since = time.perf_counter()
            return had

        def let_go(turns, held):
            self._let_go(turns, held)
            if self._since is not None:
                self.held += time.perf_counter() - self._since
                self._since = None

        WriterTurns.take, WriterTurns._let_go = take, let_go
        return self

    def __exit__(self, *_exc):
        WriterTurns.take, WriterTurns._let_go = self._take, self._let_go


def measure(app, user, tool: str, arguments: dict, n: int) -> tuple[list[float], float, list[float]]:
    statements = 0

    def count(*_args):
        nonlocal statements
        statements += 1

    event.listen(db.engine, "before_cursor_execute", count)
    timings, holds = [], []
    try:
        with HeldTurns() as turns:
            for i in range(n):
                use(app, ScriptedProvider(calls(call(tool, arguments, f"call_{i}")), answer("done")))
                started, held = time.perf_counter(), turns.held
                turn = manager().prepare_message(db.session, user, "bench", None)
                for _ in manager().run(db.session, turn):
                    pass
                timings.append((time.perf_counter() - started) * 1000)
                holds.append((turns.held - held) * 1000)
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    return timings, statements / n, holds


def main() -> None:
    logging.disable(logging.INFO)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    app = seeded_app()
    with app.app_context():
        manager().registry.register(Noop())
        user = db.session.query(User).filter_by(username="staff").one()
        print(f"{n} messages per case, seeded SQLite (WAL, synchronous=NORMAL), scripted model (0 ms)\n")
        print(
            "| case | p50 ms | p95 ms | SQL statements per message | write lock held per message, p50 / p99 ms |\n"
            "|---|---|---|---|---|"
        )
        for label, tool, arguments in (
            ("one round, no-op tool", "noop", {}),
            ("one round, search_materials 面粉", "search_materials", {"keyword": "面粉"}),
        ):
            measure(app, user, tool, arguments, 20)  # warm up
            timings, sql, holds = measure(app, user, tool, arguments, n)
            print(
                f"| {label} | {percentile(timings, 50):.2f} | {percentile(timings, 95):.2f} | {sql:.0f} "
                f"| {percentile(holds, 50):.2f} / {percentile(holds, 99):.2f} |"
            )


if __name__ == "__main__":
    main()
