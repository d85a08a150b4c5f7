"""Round trips to PostgreSQL, counted in libpq's own trace of the protocol (PQtrace): a unit the
machine's load does not move.

The client waits for the server after a message that asks for an answer: a simple query
(`Query`, psycopg's BEGIN and COMMIT outside a pipeline), the end of an extended-protocol
statement or of a pipeline (`Sync`), a pipeline's request for the results so far (`Flush`). A
round trip is what the client sends before the server's next answer, counted when it holds one
of those: statements sent together in a pipeline, with one of them at the end, are one (a `Sync`
and a `Flush` sent back to back too, as psycopg ends a pipeline); statements queued in a pipeline
whose answers the client reads later, without waiting, are none of their own."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Engine, event

WAITED_FOR = ("Query", "Sync", "Flush")


@dataclass
class Trips:
    """What the client sent, by message type (Parse, Bind, Execute, Query, Sync, Flush …)."""

    sent: Counter = field(default_factory=Counter)
    round_trips: int = 0
    # What each round trip sent, in order: its messages' kinds, a Query's or a Parse's SQL cut short
    trips: list[list[str]] = field(default_factory=list)


@contextmanager
def counted(engine: Engine) -> Iterator[Trips]:
    """Every message a connection checked out of `engine` sends while the block runs. Connections
    checked out before the block are not traced: end the session's transaction first."""
    from psycopg import pq

    trips = Trips()
    fd, path = tempfile.mkstemp(prefix="pgtrace_")

    def trace(dbapi_connection, _record, _proxy):
        dbapi_connection.pgconn.trace(fd)
        dbapi_connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    def untrace(dbapi_connection, _record):
        dbapi_connection.pgconn.untrace()  # libpq flushes its stream here

    event.listen(engine, "checkout", trace)
    event.listen(engine, "checkin", untrace)
    try:
        yield trips
    finally:
        event.remove(engine, "checkout", trace)
        event.remove(engine, "checkin", untrace)
        with open(path, encoding="utf-8", errors="replace") as lines:
            _read(trips, lines)
        os.close(fd)
        os.unlink(path)


def _read(trips: Trips, lines) -> None:
    sending: list[str] = []  # what the client sent since the server last answered
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 3:
            continue
        kind, quoted = parts[2], (parts[3] if len(parts) > 3 else "").split('"')
        if parts[0] == "F":
            trips.sent[kind] += 1
            if kind == "Query":
                kind = f"Query {quoted[1][:40]}"
            elif kind == "Parse":  # its statement's name first, then its SQL
                kind = f"Parse {quoted[3][:40]}"
            sending.append(kind)
        elif parts[0] == "B" and sending:
            _ended(trips, sending)
            sending = []
    _ended(trips, sending)


def _ended(trips: Trips, sending: list[str]) -> None:
    if any(s.split(" ")[0] in WAITED_FOR for s in sending):
        trips.round_trips += 1
        trips.trips.append(sending)
