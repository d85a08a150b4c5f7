"""Engine-level settings and the write transaction used by the stock ledger."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.orm import Session, make_transient_to_detached, scoped_session

WRITE_LOCK_SECONDS = 15  # how long a write waits for a lock: SQLite's busy_timeout, PostgreSQL's lock_timeout


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
        cursor.execute(f"PRAGMA busy_timeout={WRITE_LOCK_SECONDS * 1000}")
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
        elif engine.dialect.name == "postgresql":
            # A write has a deadline, as SQLite's busy_timeout gives it there: waiting for a row lock
            # or running ends with an error (and a rollback), never a request held for ever.
            session.execute(
                text(
                    f"SET LOCAL lock_timeout = '{WRITE_LOCK_SECONDS}s'; "
                    f"SET LOCAL statement_timeout = '{2 * WRITE_LOCK_SECONDS}s'"
                )
            )
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def in_transaction(session: Session | scoped_session) -> bool:
    """Whether the session has a transaction open (Flask-SQLAlchemy's scoped session included)."""
    return (session() if isinstance(session, scoped_session) else session).in_transaction()


def begin_write(session: Session) -> None:
    """End the session's read snapshot and start a transaction that will write.

    On SQLite in WAL mode a transaction that read before another connection committed cannot
    then write (SQLITE_BUSY_SNAPSHOT). The loop writes after tools have committed on their own
    connections, so at those points it starts afresh, holding the write lock from the start.
    """
    if in_transaction(session):  # else no empty transaction is made only to be committed
        session.commit()
    if session.get_bind().dialect.name == "sqlite":
        session.connection(execution_options={"sqlite_begin": "BEGIN IMMEDIATE"})


@contextmanager
def writing(session: Session) -> Iterator[None]:
    """A step that reads then writes: the write lock from the start (begin_write), given back at
    once if the step refuses (a 409 must not keep others waiting for the lock)."""
    begin_write(session)
    try:
        yield
    except BaseException:
        session.rollback()
        raise


@dataclass(frozen=True)
class _Table:
    """What insert_rows needs of a model, worked out once."""

    keys: dict  # column -> attribute name
    defaults: dict  # attribute name -> Python default (a callable or a value)
    generated: str | None  # the autoincrement primary key's attribute, if any
    insert: object
    insert_returning: object | None


@functools.cache
def _table(model: type) -> _Table:
    mapper = inspect(model)
    table = mapper.local_table
    keys = {column: mapper.get_property_by_column(column).key for column in table.columns}
    auto = [c for c in table.primary_key.columns if c.autoincrement is not False and c.default is None]
    defaults = {keys[c]: c.default for c in table.columns if c.default is not None}
    returning = table.insert().returning(auto[0], sort_by_parameter_order=True) if auto else None
    return _Table(keys, defaults, keys[auto[0]] if auto else None, table.insert(), returning)


def insert_rows(session: Session, model: type, rows: list[dict], with_ids: bool = False) -> list[dict]:
    """Write rows of a model's table with one Core INSERT, in the session's transaction, and return
    them as written: column defaults applied here, in Python (so nothing has to be read back), and
    with `with_ids` an autoincrement id from RETURNING. Rows are keyed by attribute name.

    The loop's hot path: per row, the unit of work's bookkeeping cost several times the write
    itself (docs/benchmarks.md, the loop)."""
    t = _table(model)
    written = []
    for row in rows:
        filled = {}
        for key in t.keys.values():
            value = row.get(key)
            if value is None and key in t.defaults:
                default = t.defaults[key]
                value = default.arg(None) if default.is_callable else default.arg
            if value is not None or key != t.generated:
                filled[key] = value
        written.append(filled)
    values = [{column.name: row[key] for column, key in t.keys.items() if key in row} for row in written]
    connection = session.connection()  # Core on the session's connection: no ORM execution around it
    if with_ids and t.insert_returning is not None:
        for row, (new,) in zip(written, connection.execute(t.insert_returning, values).all(), strict=True):
            row[t.generated] = new
    else:
        connection.execute(t.insert, values)
    return written


def inserted(session: Session, model: type, rows: list[dict]) -> list:
    """`insert_rows`, handed back as ORM objects the session holds as if it had loaded them (every
    attribute known, none read back). Relationships are not set: the caller sets a collection it
    needs with set_committed_value."""
    objects = []
    for row in insert_rows(session, model, rows, with_ids=True):
        obj = model(**row)
        make_transient_to_detached(obj)
        session.add(obj)
        objects.append(obj)
    return objects
