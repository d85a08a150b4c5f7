"""A read tool's statements stopped by the database at its deadline (`stopped_at`): how the call
runner (tool_calls.py) gives up on a read at its timeout, in the thread that runs it."""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, event
from sqlalchemy.orm import Session

from inventory_ai.database import SQLiteConnection


class DeadlinePassed(Exception):
    """A session's statements were stopped at their deadline (stopped_at)."""


# SQLite's virtual machine steps between two looks at the clock. The look needs the GIL back, which
# under load can wait a switch interval (5 ms): rare enough that the domain's reads never look, and
# an endless one still stops within a few hundredths of a second of its deadline (2-15 ms seen).
STEPS_BETWEEN_LOOKS = 1_000_000


class _Deadline:
    __slots__ = ("at", "watched")

    def __init__(self, at: float) -> None:
        self.at = at
        self.watched = True  # False once the block is left: a handler left behind stops nothing

    def passed(self) -> bool:
        return self.watched and time.monotonic() > self.at


@contextmanager
def stopped_at(session: Session, deadline: float) -> Iterator[None]:
    """The session's statements stopped by the database once time.monotonic() passes `deadline`,
    each in its own thread (`_deadline_begins`): on SQLite by a progress handler, on PostgreSQL by
    `SET LOCAL statement_timeout` to the time left when the transaction begins (so there each
    statement of a read may take that long: a bound per statement, not for the whole read, and
    kept until the transaction ends: the caller commits or rolls back right after the block). A
    stopped statement's error, or one that came of it, leaves the block as DeadlinePassed with the
    session rolled back; any other error leaves as it is.

    Why: a read tool ran in a thread of its own so that the loop could stop waiting at its timeout.
    The hand-off there and back cost more than most reads, and a query given up on ran on,
    unobserved, holding its connection (measured in docs/benchmarks.md). Here nothing crosses
    threads, and nothing reaches a connection after it went back to the pool."""
    watch = session.info["deadline"] = _Deadline(deadline)
    try:
        yield
    except Exception as exc:
        if not _stopped(exc):
            raise
        session.rollback()
        raise DeadlinePassed() from exc
    finally:
        watch.watched = False
        del session.info["deadline"]


def _stopped(exc: BaseException | None) -> bool:
    """Whether an error is a statement stopped at its deadline, or came of one (its cause or context)."""
    while exc is not None:
        for error in (exc, getattr(exc, "orig", None)):  # SQLAlchemy wraps the driver's error
            if (
                isinstance(error, sqlite3.OperationalError)
                and error.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT
            ):
                return True
            if getattr(error, "sqlstate", None) == "57014":  # PostgreSQL's query_canceled
                return True
        exc = exc.__cause__ or exc.__context__
    return False


@event.listens_for(Session, "after_begin")
def _deadline_begins(session: Session, _transaction, connection: Connection) -> None:
    watch = session.info.get("deadline")
    if watch is None:
        return
    driver_connection = connection.connection.driver_connection
    if isinstance(driver_connection, SQLiteConnection):
        # A true answer interrupts the statement. Taken off when the connection goes back to the
        # pool (install_sqlite_pragmas); a handler left elsewhere answers False once the block ends.
        driver_connection.set_progress_handler(watch.passed, STEPS_BETWEEN_LOOKS)
        driver_connection.deadline_set = True
    elif connection.dialect.name == "postgresql":
        # Rounded up, and a millisecond more: never stopped before the deadline.
        left = max(1, math.ceil((watch.at - time.monotonic()) * 1000) + 1)
        connection.exec_driver_sql(f"SET LOCAL statement_timeout = {left}")
