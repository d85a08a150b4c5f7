"""What the loop's writes cost the database alone: its own statements replayed through plain sqlite3.

    .venv/bin/python bench/loop_floor.py [messages]

One message of `loop_overhead.py`'s no-op case is run through ToolExecutionManager while every
statement it sends and every commit is recorded. The same statements, with the same parameters
(ids made new for each message), are then sent through Python's own sqlite3 module, on the same
seeded database with the app's pragmas (WAL, synchronous=NORMAL), in the same three transactions.
No SQLAlchemy, no ORM, no loop: the floor under `loop_overhead.py`'s figure for as long as every
row is stored in three transactions. Reported: p50, mean and p95 per message; the mean includes
SQLite's automatic checkpoints (every 1,000 WAL pages), which the p50 does not see.
"""

from __future__ import annotations

import logging
import re
import statistics
import sys
import time
import uuid

from _common import percentile, seeded_app
from loop_overhead import Noop, measure
from sqlalchemy import event

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.writer_turns import SQLiteConnection

# The values that must differ from one message to the next: ids (new_id's 32 hex digits) and the
# scripted model's call ids, both unique columns.
_UNIQUE = re.compile(r"^(?:[0-9a-f]{32}|call_\w+)$")


def recorded_message(app, user) -> list[tuple | None]:
    """The statements (and commits, as None) of one message."""
    recorded: list[tuple | None] = []

    def statement(_conn, _cursor, sql, parameters, _context, executemany):
        recorded.append((sql, parameters, executemany))

    # Commits as the DBAPI connection sees them: the loop commits some transactions through the
    # Session (Core's commit event) and others on a pooled connection directly (database.direct_write).
    committing = SQLiteConnection.commit

    def commit(connection):
        recorded.append(None)
        committing(connection)

    event.listen(db.engine, "before_cursor_execute", statement)
    SQLiteConnection.commit = commit
    try:
        measure(app, user, "noop", {}, 1)
    finally:
        event.remove(db.engine, "before_cursor_execute", statement)
        SQLiteConnection.commit = committing
    return recorded


def fresh(parameters, ids: dict):
    def new(value):
        if isinstance(value, str) and _UNIQUE.match(value):
            return ids.setdefault(value, uuid.uuid4().hex)
        return value

    if parameters and isinstance(parameters[0], (list, tuple)):
        return [tuple(new(v) for v in row) for row in parameters]
    return tuple(new(v) for v in parameters)


def replay(connection, recorded: list[tuple | None], messages: int = 1) -> None:
    """The recorded message's statements and commits sent again, ids new each time."""
    for _ in range(messages):
        ids: dict = {}
        for entry in recorded:
            if entry is None:
                connection.execute("COMMIT")
            elif entry[2]:
                connection.executemany(entry[0], fresh(entry[1], ids))
            else:
                connection.execute(entry[0], fresh(entry[1], ids)).fetchall()


def main() -> None:
    logging.disable(logging.INFO)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    app = seeded_app()
    with app.app_context():
        manager().registry.register(Noop())
        user = db.session.query(User).filter_by(username="staff").one()
        measure(app, user, "noop", {}, 20)  # warm up: the same path as the loop benchmark's
        recorded = recorded_message(app, user)
        db.session.remove()
        # The pool's own sqlite3 connection: the app's pragmas applied, BEGIN and COMMIT left to
        # the statements as recorded (install_sqlite_pragmas); nothing of SQLAlchemy's used below.
        connection = db.engine.raw_connection().driver_connection
    timings = []
    for _ in range(n):
        started = time.perf_counter()
        replay(connection, recorded)
        timings.append((time.perf_counter() - started) * 1000)
    statements = sum(1 for entry in recorded if entry is not None)
    commits = recorded.count(None)
    print(f"{n} messages, seeded SQLite (WAL, synchronous=NORMAL), plain sqlite3\n")
    print(
        "| case | p50 ms | mean ms | p95 ms | statements (of them BEGIN) | commits |\n|---|---|---|---|---|---|"
    )
    begins = sum(1 for entry in recorded if entry is not None and entry[0].startswith("BEGIN"))
    print(
        f"| the no-op round's writes, replayed | {percentile(timings, 50):.3f} | {statistics.mean(timings):.3f} "
        f"| {percentile(timings, 95):.3f} | {statements} ({begins}) | {commits} |"
    )


if __name__ == "__main__":
    main()
