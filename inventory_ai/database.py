"""Engine-level settings and the write transaction used by the stock ledger."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, event
from sqlalchemy.orm import Session


def install_sqlite_pragmas(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        # pysqlite's own transaction handling delays BEGIN; we issue BEGIN ourselves (below) so a
        # ledger write can take the write lock up front with BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=15000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        mode = conn.get_execution_options().get("sqlite_begin", "BEGIN")
        conn.exec_driver_sql(mode)


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Session]:
    """A session in its own transaction that holds the write lock from the first statement.

    SQLite: BEGIN IMMEDIATE, so concurrent writers queue on busy_timeout instead of failing
    on a read-to-write upgrade. PostgreSQL: an ordinary transaction; callers lock the rows
    they change with SELECT ... FOR UPDATE.
    """
    with Session(bind=engine, expire_on_commit=False) as session:
        if engine.dialect.name == "sqlite":
            session.connection(execution_options={"sqlite_begin": "BEGIN IMMEDIATE"})
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def begin_write(session: Session) -> None:
    """End the session's read snapshot and start a transaction that will write.

    On SQLite in WAL mode a transaction that read before another connection committed cannot
    then write (SQLITE_BUSY_SNAPSHOT). The loop writes after tools have committed on their own
    connections, so at those points it starts afresh, holding the write lock from the start.
    """
    session.commit()
    if session.get_bind().dialect.name == "sqlite":
        session.connection(execution_options={"sqlite_begin": "BEGIN IMMEDIATE"})
