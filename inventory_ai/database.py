"""Engine-level settings and the write transaction used by the stock ledger."""

from __future__ import annotations

import functools
import select
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine, event, exc, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapper, Session, configure_mappers, scoped_session
from sqlalchemy.orm.attributes import instance_dict, instance_state, set_committed_value

from inventory_ai.statements import Direct, Prepared, begin_pipelined, commit, end_pipeline, send
from inventory_ai.writer_turns import WRITE_LOCK_SECONDS, SQLiteConnection, TurnNotHad, WriterTurns

# A pooled PostgreSQL connection idle longer than this is pinged before it is used
# (install_connection_check): a NAT or load balancer may have dropped it without a word.
PING_AFTER_IDLE_SECONDS = 30.0


def install_connection_check(engine: Engine) -> None:
    """PostgreSQL: a pooled connection that is gone is replaced before a request uses it.

    Two ways a connection goes:
    - The server ends it (a restart, an administrator's pg_terminate_backend, an idle timeout) and
      says so: a FATAL message and the end of the stream. An idle pooled connection has nothing to
      read, as the server speaks only when asked, so a socket with something to read is taken as
      that farewell (the app LISTENs for nothing that could arrive instead). No round trip.
    - Something between drops it without a word (a NAT or a load balancer past its idle timeout,
      an address moved to another host): nothing arrives until the client sends, then a reset.
      Only a round trip finds that, so one that sat idle in the pool past PING_AFTER_IDLE_SECONDS
      is pinged first. Middleboxes wait minutes before they drop anything.
    A gone connection is thrown away (DisconnectionError; a failed ping, InvalidatePoolError: its
    idle neighbours are likely gone too) and the pool opens another. This replaces
    `pool_pre_ping`, which pinged at every checkout: two round trips more a chat message, and
    a tenth of its CPU in the worker and in PostgreSQL (measured in docs/benchmarks.md). Under
    load no connection sits idle for long, so nothing is pinged."""
    if engine.dialect.name != "postgresql":
        return
    from psycopg import Error as PsycopgError
    from psycopg.pq import TransactionStatus

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_connection, record):
        if record is not None:  # None: the connection was invalidated, and nothing comes back to the pool
            record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _still_there(dbapi_connection, record, _proxy):
        if dbapi_connection.closed or dbapi_connection.info.transaction_status != TransactionStatus.IDLE:
            raise exc.DisconnectionError("the connection is not usable")
        if _has_spoken(dbapi_connection.fileno()):
            raise exc.DisconnectionError("the server ended the connection")
        idle_since = record.info.get("idle_since")  # none yet: a new connection
        if idle_since is not None and time.monotonic() - idle_since > PING_AFTER_IDLE_SECONDS:
            try:
                engine.dialect.do_ping(dbapi_connection)
            except PsycopgError as error:
                raise exc.InvalidatePoolError("a ping after a long idle failed") from error


def _has_spoken(fd: int) -> bool:
    """Whether a socket has something to read (or its end), without waiting."""
    if not hasattr(select, "poll"):  # Windows: select() alone, whose descriptors stay small there
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def install_sqlite_pragmas(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return
    turns = WriterTurns.for_file(engine.url.database)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        if isinstance(dbapi_connection, SQLiteConnection):
            dbapi_connection.turns = turns
        # pysqlite's own transaction handling delays BEGIN; we issue BEGIN ourselves (below) so a
        # ledger write can take the write lock up front with BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={WRITE_LOCK_SECONDS * 1000}")
        cursor.close()

    @event.listens_for(engine, "checkin")
    def _no_deadline(dbapi_connection, _record):
        if getattr(dbapi_connection, "deadline_set", False):  # stopped_at's, for the next user: none
            dbapi_connection.set_progress_handler(None, 0)
            dbapi_connection.deadline_set = False

    @event.listens_for(engine, "begin")
    def _begin(conn):
        _sqlite_begin(conn, conn.get_execution_options().get("sqlite_begin", "BEGIN"))


def _sqlite_begin(conn: Connection | Direct, mode: str) -> None:
    """BEGIN on SQLite; a BEGIN IMMEDIATE after this connection's writer's turn (WriterTurns)."""
    dbapi_connection = conn.connection.dbapi_connection
    turns = getattr(dbapi_connection, "turns", None)
    took = False
    if mode == "BEGIN IMMEDIATE" and turns is not None:
        try:
            took = turns.take(dbapi_connection)
        except TurnNotHad:
            # The write has waited its WRITE_LOCK_SECONDS: SQLite is asked once more without a
            # second wait, and "database is locked" ends the request as a busy one (503).
            dbapi_connection.execute("PRAGMA busy_timeout=0")
            try:
                send(conn, mode)
            finally:
                dbapi_connection.execute(f"PRAGMA busy_timeout={WRITE_LOCK_SECONDS * 1000}")
            return
    try:
        send(conn, mode)  # through the DBAPI: Core's execution around a BEGIN cost more than it
    except BaseException:
        if took:
            turns.give_back(dbapi_connection)
        raise


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


def resolved(session: Session | scoped_session) -> Session:
    """The Session itself: a scoped one (Flask-SQLAlchemy's) looked up now. A step that uses it
    several times looks it up once: each lookup finds the app context again."""
    return session() if isinstance(session, scoped_session) else session


def in_transaction(session: Session | scoped_session) -> bool:
    """Whether the session has a transaction open (Flask-SQLAlchemy's scoped session included)."""
    return resolved(session).in_transaction()


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
def direct_write(session: Session) -> Iterator[Direct]:
    """A write transaction on a pooled connection of its own, outside the session: for writes whose
    rows nothing reads back through the session's transaction (the loop's round and ending). The
    write lock from the start, as begin_write takes it; committed at the end of the block, rolled
    back if it raises; the connection back in the pool either way. The session's own transaction
    ends first: a thread holds one connection at a time. The Session's transaction around a write
    (its connection, its commit) cost the loop more CPU than the statements (docs/benchmarks.md)."""
    session = resolved(session)  # the scoped one looked up once
    if session.in_transaction():
        session.commit()
    engine = session.get_bind()
    pooled = engine.raw_connection()
    direct = Direct(engine, pooled)
    # PostgreSQL: BEGIN, the statements and COMMIT in one pipeline (statements.begin_pipelined)
    pipelined = engine.dialect.driver == "psycopg"
    ended = False  # committed or rolled back here: the pool need not roll it back again
    try:
        if engine.dialect.name == "sqlite":
            _sqlite_begin(direct, "BEGIN IMMEDIATE")
        elif pipelined:
            begin_pipelined(direct)
        yield direct
        commit(direct)
        ended = True
    except BaseException as error:
        if direct.pipeline is not None:  # out of the pipeline first: its answers read, errors and all
            end_pipeline(direct, error)
        if pooled.is_valid:  # else its connection was dropped, and the transaction with it
            try:
                pooled.rollback()
                ended = True
            except engine.dialect.loaded_dbapi.Error:  # the error that matters is the one raised
                pooled.invalidate()
        # What the block put on the session's objects (as_written) was never stored: they are read
        # again from the database, as a rollback of the session's own transaction would have it.
        session.expire_all()
        raise
    finally:
        if pipelined and pooled.is_valid:  # back out of the autocommit the pipeline needed, whatever ended it
            try:
                pooled.dbapi_connection.autocommit = False
            except engine.dialect.loaded_dbapi.Error:
                pooled.invalidate()
                ended = False
        if ended:  # back to the pool without its reset (a second rollback), as Core's Connection.close does
            pooled._close_special(transaction_reset=True)
        else:
            pooled.close()


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
    attributes: tuple[str, ...]  # the attribute names, in the columns' order
    known: frozenset[str]  # the same, as a set: which rows `filled` may copy whole
    # The start of a filled row: every attribute, in the columns' order, with its default value
    # where it has one that is not called (None where it has none, or one called per row).
    blank: dict
    valued: frozenset[str]  # the attributes whose default is a value (in `blank`)
    called: tuple[tuple[str, Callable], ...]  # (attribute, its default's callable), called per row
    renamed: bool  # whether some column's key is not its attribute's name
    generated: str | None  # the autoincrement primary key's attribute, if any
    insert: object
    insert_returning: object | None
    mapper: Mapper
    new_object: Callable[[], object]  # an instance with no attribute set, as a load makes one (no __init__)
    # Every column but the generated key, through the DBAPI (statements.py); with RETURNING it.
    direct: Prepared
    direct_returning: Prepared | None


@functools.cache
def _table(model: type) -> _Table:
    # The mappers set up first, as a query or a constructor would: `adopted` makes objects without
    # either, and an object of an unconfigured class has no attribute machinery yet.
    configure_mappers()
    mapper = inspect(model)
    table = mapper.local_table
    keys = {column: mapper.get_property_by_column(column).key for column in table.columns}
    auto = [c for c in table.primary_key.columns if c.autoincrement is not False and c.default is None]
    defaults = {keys[c]: c.default for c in table.columns if c.default is not None}
    valued = {key: d.arg for key, d in defaults.items() if not d.is_callable}
    called = tuple((key, d.arg) for key, d in defaults.items() if d.is_callable)
    returning = table.insert().returning(auto[0], sort_by_parameter_order=True) if auto else None
    written = [c.key for c in table.columns if not auto or c is not auto[0]]
    return _Table(
        keys, tuple(keys.values()), frozenset(keys.values()), {k: valued.get(k) for k in keys.values()},
        frozenset(valued), called, any(c.key != k for c, k in keys.items()),
        keys[auto[0]] if auto else None, table.insert(), returning,
        mapper, mapper.class_manager.new_instance, Prepared(table.insert(), written),
        Prepared(table.insert().returning(auto[0]), written) if auto else None,
    )  # fmt: skip


def filled(model: type, rows: list[dict]) -> list[dict]:
    """Rows of a model's table as an INSERT of them writes them: column defaults applied here, in
    Python, so nothing has to be read back (an autoincrement id aside). Keyed by attribute name.
    No database work: the loop makes its rows before it takes SQLite's write lock."""
    t = _table(model)
    written = []
    for row in rows:
        full = t.blank.copy()  # copied and updated in C: this runs for every row the loop writes
        # A key that is no column of the table is not written.
        full.update(row if t.known.issuperset(row) else {k: v for k, v in row.items() if k in t.known})
        for key in t.valued.intersection(row):  # given as None: its default, as if not given
            if full[key] is None:
                full[key] = t.blank[key]
        for key, make in t.called:
            if full[key] is None:
                full[key] = make(None)  # SQLAlchemy's wrapper of the default: takes a context
        if t.generated is not None and full[t.generated] is None:
            del full[t.generated]  # the database gives it
        written.append(full)
    return written


def insert_rows(
    where: Session | Direct, model: type, rows: list[dict], with_ids: bool = False, made_filled: bool = False
) -> list[dict]:
    """Write rows of a model's table with one Core INSERT, in the session's transaction (or a
    direct_write's), and return them as written (`filled`; rows `filled` made already, as the loop
    makes its rows before the write lock, say so with `made_filled` and are not filled again), with
    `with_ids` an autoincrement id from RETURNING. Rows that bring their own autoincrement id are
    written in a session only.

    The loop's hot path: per row, the unit of work's bookkeeping cost several times the write
    itself (docs/benchmarks.md, the loop)."""
    t = _table(model)
    written = rows if made_filled else filled(model, rows)
    values = written  # keyed as the statements' parameters are, by column key, unless renamed
    if t.renamed:
        values = [{column.key: row[key] for column, key in t.keys.items() if key in row} for row in written]
    if t.generated is None or all(t.generated not in row for row in written):
        # Straight through the DBAPI (statements.py): several rows with ids on PostgreSQL in one
        # round trip there too (psycopg's pipelined executemany), on SQLite a statement a row.
        if not (with_ids and t.direct_returning is not None):
            t.direct.execute(where, values)
            return written
        for row, new in zip(written, t.direct_returning.execute(where, values, returning=True), strict=True):
            row[t.generated] = new
        return written
    connection = where.connection()  # Core on the session's connection: no ORM execution around it
    if with_ids and t.insert_returning is not None:
        for row, (new,) in zip(written, connection.execute(t.insert_returning, values).all(), strict=True):
            row[t.generated] = new
    else:
        connection.execute(t.insert, values)
    return written


def adopted(session: Session | scoped_session, model: type, rows: list[dict]) -> list:
    """Rows already written (and committed, or in the session's transaction), as ORM objects the
    session holds as if it had loaded them: every attribute known, none read back. Relationships
    are not set: the caller sets a collection it needs with set_committed_value.

    Made and attached as a load makes and attaches them (sqlalchemy.orm.loading): the values put in
    the object's dict, its identity key set, the object put in the session's identity map. Not
    through the constructor and session.add: their change events, history and cascades, which the
    next step discards, cost more than the write, and session.add opens a transaction in the
    session (with nothing in it) that the loop then had to commit (docs/benchmarks.md, the loop)."""
    session = resolved(session)
    t = _table(model)
    identity_map, session_id = session.identity_map, session.hash_key
    objects = []
    for row in rows:
        obj = t.new_object()
        state = instance_state(obj)
        instance_dict(obj).update(row)  # the object's dict, as state.dict finds it through a weak reference
        state.key = t.mapper._identity_key_from_state(state)
        state.session_id = session_id
        identity_map._add_unpresent(state, state.key)
        objects.append(obj)
    return objects


def held(session: Session | scoped_session, model: type, key: object):
    """`session.get(model, key)` that finds the session's own copy first: an object the session holds
    and has nothing expired on is what `get` would return, without its lookup's Python around it
    (the loop takes its answer and user this way, moments after the intake attached them); else
    `get` itself (a load, an expired object refreshed, a deleted one None)."""
    session = resolved(session)
    obj = session.identity_map.get(_table(model).mapper.identity_key_from_primary_key((key,)))
    if obj is not None and not instance_state(obj).expired:
        return obj
    return session.get(model, key)


def as_written(obj: object, values: dict) -> None:
    """Column values just written by a statement of the caller's, put on the session's object as a
    load leaves them: known, with nothing to write. Through set_committed_value only where the object
    has changes still to flush (it keeps them apart); else straight into its dict, which costs less."""
    state = instance_state(obj)
    if state.modified:
        for key, value in values.items():
            set_committed_value(obj, key, value)
    else:
        instance_dict(obj).update(values)
