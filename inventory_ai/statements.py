"""Core statements sent straight through the DBAPI cursor of a session's connection: compiled once
per dialect, their parameters converted by the columns' own types, and nothing of SQLAlchemy's
execution around them (no execution context, no result object, no compiled-cache lookup).

For the loop's writes (database.insert_rows, assistant/answer_store.py): the same SQL and the same
values SQLAlchemy would send, at a fraction of the Python (docs/benchmarks.md, the loop). Errors are
SQLAlchemy's as Core raises them (IntegrityError, OperationalError …; a value a column's type
refuses, StatementError), and a connection the database dropped is invalidated as Core would: it
and the pool's other connections of its time, likely dropped too. Listeners of the engine's `before_cursor_execute` and
`after_cursor_execute` are told of each statement, with a bare object for the execution context
that they may put attributes on (OpenTelemetry's instrumentation keeps its span there: the
statement is in the trace); what they return is not used. So what counts, watches or traces
statements (the benchmarks, tests, traces) sees these too. After an error, as in Core, the
`handle_error` listeners are told instead (a trace's span ends there as an error); with none, the
`after` listeners are, so what they opened closes. In a direct transaction on PostgreSQL the
statements are queued in a pipeline (begin_pipelined): the `after` listeners are told once one is
queued, and its error comes up where the client next waits (a later statement's answer, the COMMIT),
raised as that one's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from sqlalchemy import Engine, exc
from sqlalchemy.engine import Connection
from sqlalchemy.engine.base import ExceptionContextImpl
from sqlalchemy.orm import Session
from sqlalchemy.pool import PoolProxiedConnection


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # the bind parameters, in the order a positional paramstyle sends them
    processors: tuple  # per name: the column type's conversion for this dialect, or None
    fixed: dict  # name -> value, for the statement's own literals (a WHERE's status)
    positional: bool
    results: tuple  # per column a SELECT returns: its type's conversion for this dialect, or None
    take: Callable[[dict], tuple]  # a row's values for `names`, in their order
    converted: tuple[tuple[int, Callable], ...]  # (index in names, conversion) where there is one


class Direct:
    """A pooled connection in a write transaction outside any Session (database.direct_write): what
    the statements here need of a Core Connection, and what the engine's cursor listeners are
    given in its place (`engine`, `dialect`, `connection`: the pooled connection)."""

    def __init__(self, engine: Engine, pooled: PoolProxiedConnection):
        self.engine, self.dialect, self.dispatch = engine, engine.dialect, engine.dispatch
        self.connection = pooled
        # psycopg's Pipeline and the block that holds the connection in it, while the transaction is
        # sent as one (begin_pipelined)
        self.pipeline, self.pipeline_block = None, None
        # Rows queued to come back with the COMMIT's answer (Prepared.rows_at_commit), read by commit
        self.at_commit: list[AtCommit] = []

    def invalidate(self, error: BaseException) -> None:
        self.connection.invalidate(error)


class Prepared:
    """A Core statement (an INSERT, an UPDATE) whose bind parameters are all named; for an INSERT,
    `columns` fixes which columns it writes (the keys of every row given)."""

    def __init__(self, statement, columns: list[str] | None = None):
        self.statement = statement
        self.columns = columns
        self._by_dialect: dict[tuple, _Compiled] = {}
        self._latest: tuple = (None, None)  # (dialect, its compiled form): the one asked last

    def _for(self, dialect) -> _Compiled:
        latest = self._latest
        if latest[0] is dialect:  # the usual case: one engine, asked at every statement
            return latest[1]
        # Two drivers of one database (psycopg, psycopg2) compile differently: both in the key.
        key = (dialect.name, dialect.driver, dialect.paramstyle)
        compiled = self._by_dialect.get(key)
        if compiled is None:
            made = self.statement.compile(dialect=dialect, column_keys=self.columns)
            binds = {name: bind for bind, name in made.bind_names.items()}
            names = tuple(made.positiontup) if made.positional else tuple(binds)
            processors = tuple(
                binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
            )
            fixed = {n: binds[n].value for n in names if not binds[n].required and binds[n].value is not None}
            results = tuple(
                column[3].dialect_impl(dialect).result_processor(dialect, None)
                for column in made._result_columns
            )
            compiled = self._by_dialect[key] = _Compiled(
                made.string, names, processors, fixed, made.positional, results, _taker(names),
                tuple((i, process) for i, process in enumerate(processors) if process is not None),
            )  # fmt: skip
        self._latest = (dialect, compiled)
        return compiled

    def execute(
        self, where: Session | Direct, rows: list[dict], returning: bool = False, matched: bool = False
    ) -> list | int | None:
        """Send the statement once per row (one executemany for several, with `returning` on
        psycopg only), in the session's transaction or a direct one. Returns the first column of
        each row's RETURNING, else the number of rows the statement matched. In a pipelined direct
        transaction (begin_pipelined) the statement is only queued: None, unless `matched` asks
        for the count, which waits for the server's answer (a round trip)."""
        pipeline = where.pipeline if isinstance(where, Direct) else None
        connection = where if isinstance(where, Direct) else where.connection()
        dialect = connection.dialect
        compiled = self._for(dialect)
        try:
            parameters = [_values(compiled, row) for row in rows]
        except Exception as error:  # a value the column's type refuses: Core's StatementError
            raise exc.DBAPIError.instance(
                compiled.sql, rows, error, dialect.loaded_dbapi.Error, dialect=dialect
            ) from error
        raw, cursor = connection.connection.dbapi_connection, None
        try:
            cursor = raw.cursor()  # on a connection the database dropped, this fails already
            if returning and len(parameters) > 1 and dialect.driver == "psycopg":
                # One round trip for all: psycopg pipelines them, a result set per row, in order.
                _sent(connection, cursor, compiled.sql, parameters, True, returning=True)
                returned = [cursor.fetchone()[0]]
                while cursor.nextset():
                    returned.append(cursor.fetchone()[0])
                return returned
            if returning:
                returned = []
                for values in parameters:
                    _sent(connection, cursor, compiled.sql, values, False)
                    returned.append(cursor.fetchone()[0])
                return returned
            several = len(parameters) > 1
            _sent(connection, cursor, compiled.sql, parameters if several else parameters[0], several)
            if pipeline is None:
                return cursor.rowcount
            if not matched:
                return None
            pipeline.sync()  # inside the transaction's BEGIN: a Sync ends nothing, the count comes back
            return cursor.rowcount
        except dialect.loaded_dbapi.Error as error:
            raise _wrapped(connection, raw, cursor, compiled.sql, parameters, error) from error
        finally:
            _close(cursor, dialect)

    def rows(self, where: Session | Direct, values: dict) -> list[tuple]:
        """A SELECT's rows, in the session's transaction or a direct one, each value converted by
        its column's type as Core's result converts it (a JSON column's text decoded)."""
        connection = where if isinstance(where, Direct) else where.connection()
        dialect = connection.dialect
        compiled = self._for(dialect)
        parameters = _values(compiled, values)
        raw, cursor = connection.connection.dbapi_connection, None
        try:
            cursor = raw.cursor()
            _sent(connection, cursor, compiled.sql, parameters, False)
            fetched = cursor.fetchall()
        except dialect.loaded_dbapi.Error as error:
            raise _wrapped(connection, raw, cursor, compiled.sql, parameters, error) from error
        finally:
            _close(cursor, dialect)
        return _converted(compiled, fetched)

    def rows_at_commit(self, where: Session | Direct, values: dict) -> AtCommit:
        """A statement's rows (as `rows` gives them: a SELECT's, an UPDATE's RETURNING) for a caller
        that needs them only once its transaction has committed. In a pipelined direct transaction
        (begin_pipelined) the statement is queued where it stands, inside the transaction, and its
        rows come back with the COMMIT's answer: no wait of their own. If it fails, the pipeline
        stops there and nothing is committed (commit raises its error). Elsewhere it runs now."""
        if not isinstance(where, Direct) or where.pipeline is None:
            return AtCommit(rows=self.rows(where, values))
        dialect = where.dialect
        compiled = self._for(dialect)
        parameters = _values(compiled, values)
        raw, cursor = where.connection.dbapi_connection, None
        try:
            cursor = raw.cursor()
            _sent(where, cursor, compiled.sql, parameters, False)  # queued
        except dialect.loaded_dbapi.Error as error:
            _close(cursor, dialect)
            raise _wrapped(where, raw, cursor, compiled.sql, parameters, error) from error

        def read() -> list[tuple]:
            try:
                return _converted(compiled, cursor.fetchall())
            except dialect.loaded_dbapi.Error as error:
                raise _wrapped(where, raw, cursor, compiled.sql, parameters, error) from error
            finally:
                _close(cursor, dialect)

        later = AtCommit(read=read)
        where.at_commit.append(later)
        return later


class AtCommit:
    """Rows a statement gave, read when its transaction's COMMIT has been answered
    (Prepared.rows_at_commit): `commit` reads them on the connection still held; called before, it
    waits for them (a round trip in the pipeline, as `rows` would)."""

    __slots__ = ("_read", "_rows")

    def __init__(self, rows: list[tuple] | None = None, read: Callable[[], list[tuple]] | None = None):
        self._rows, self._read = rows, read

    def __call__(self) -> list[tuple]:
        if self._read is not None:
            self._rows, self._read = self._read(), None
        return self._rows


def _converted(compiled: _Compiled, fetched: list) -> list[tuple]:
    """Fetched rows with each value converted by its column's type."""
    if not any(compiled.results):
        return [tuple(row) for row in fetched]
    return [
        tuple(v if convert is None else convert(v) for v, convert in zip(row, compiled.results, strict=True))
        for row in fetched
    ]


class BuiltOnce:
    """Statements built once per shape of query (which terms, which filters), reused with new bind
    parameters: building a statement and its cache key costs SQLAlchemy more CPU than SQLite spends
    running it. No data is kept, only statements; services run in one process's threads."""

    MOST = 512  # shapes are few; this only bounds a pathological caller

    def __init__(self) -> None:
        self._by_shape: dict[tuple, object] = {}

    def get(self, shape: tuple, build):
        built = self._by_shape.get(shape)
        if built is None:
            if len(self._by_shape) >= self.MOST:
                self._by_shape.clear()
            built = self._by_shape[shape] = build()
        return built


def send(connection: Connection | Direct, sql: str) -> None:
    """A statement without parameters (a BEGIN) through the DBAPI, told and wrapped as above."""
    raw, cursor = connection.connection.dbapi_connection, None
    try:
        cursor = raw.cursor()
        _sent(connection, cursor, sql, (), False)
    except connection.dialect.loaded_dbapi.Error as error:
        raise _wrapped(connection, raw, cursor, sql, (), error) from error
    finally:
        _close(cursor, connection.dialect)


def commit(direct: Direct) -> None:
    """A direct transaction's COMMIT, its error raised as Core would (a dropped connection's pool
    invalidated as at a statement). A pipelined one's COMMIT goes with what is still queued, and
    the pipeline's end is the one wait for all of it; an error of a statement whose answer nobody
    waited for comes up here."""
    try:
        if direct.pipeline is None:
            direct.connection.commit()
            return
        with direct.connection.dbapi_connection.cursor() as cursor:
            cursor.execute("COMMIT")  # queued
        end_pipeline(direct)
    except direct.dialect.loaded_dbapi.Error as error:
        raise _wrapped(direct, direct.connection.dbapi_connection, None, "COMMIT", (), error) from error
    reads, direct.at_commit = direct.at_commit, []
    for read in reads:  # their rows came back with the COMMIT's answer: read while the connection is held
        read()


def begin_pipelined(direct: Direct) -> None:
    """PostgreSQL through psycopg: the direct transaction's BEGIN, statements and COMMIT sent in
    one pipeline, so that the client waits only where it reads an answer (a SELECT's rows, a
    RETURNING, a count asked for) and once at the end (commit). psycopg sends its own BEGIN before a
    transaction's first statement and waits for it, in a pipeline too, so the connection is in
    autocommit while the pipeline lasts and the BEGIN and the COMMIT are sent here, as statements
    of the pipeline: the same transaction, without its two waits of their own. It stays all or
    nothing: after an error PostgreSQL skips what follows in the pipeline, COMMIT included, and the
    caller rolls back (database.direct_write)."""
    raw = direct.connection.dbapi_connection
    raw.autocommit = True  # no round trip: psycopg only checks that the connection is idle
    direct.pipeline_block = raw.pipeline()
    direct.pipeline = direct.pipeline_block.__enter__()
    with raw.cursor() as cursor:
        cursor.execute("BEGIN")  # queued: it goes with the first statement


def end_pipeline(direct: Direct, error: BaseException | None = None) -> None:
    """The direct transaction's pipeline ended: what is queued sent with a Sync, its answers read
    (the first error among them raised, unless the block already raises `error`), and the connection
    out of pipeline mode. Its transaction is then committed, or open or failed for the caller to
    roll back; the connection leaves autocommit in database.direct_write."""
    block, direct.pipeline, direct.pipeline_block = direct.pipeline_block, None, None
    if error is None:
        block.__exit__(None, None, None)
    else:
        block.__exit__(type(error), error, error.__traceback__)


def _close(cursor, dialect) -> None:
    """A cursor closed after its statement; on a connection already gone there is nothing to close."""
    if cursor is not None:
        try:  # noqa: SIM105 (contextlib.suppress costs more, at every statement)
            cursor.close()
        except dialect.loaded_dbapi.Error:
            pass


class _Context:
    """Stands for the execution context Core would pass: listeners may keep attributes on it."""


def _sent(
    connection: Connection | Direct, cursor, sql: str, parameters, several: bool, returning: bool = False
) -> None:
    """One statement run on the cursor (an executemany when `several`; with `returning`, psycopg's
    that keeps each row's RETURNING), the engine's cursor listeners told before it and after it
    (after an error, its handle_error listeners); nothing is built when none listens. A plain
    function, not a context manager: it runs at every statement."""
    dispatch = connection.dispatch
    on_error = connection.dialect.dispatch.handle_error  # where Core keeps an engine's handle_error
    if not (dispatch.before_cursor_execute or dispatch.after_cursor_execute or on_error):
        if several:
            _run_many(cursor, sql, parameters, returning)
        else:
            cursor.execute(sql, parameters)
        return
    context = _Context()
    for listener in dispatch.before_cursor_execute:
        listener(connection, cursor, sql, parameters, context, several)
    try:
        if several:
            _run_many(cursor, sql, parameters, returning)
        else:
            cursor.execute(sql, parameters)
    except Exception as error:
        # As Core: a failed statement goes to `handle_error` (OpenTelemetry marks its span an
        # error and ends it there), not to `after_cursor_execute`; what the listeners return is
        # not used. Without a `handle_error` listener the after-listeners are told, so a span
        # opened by one that has no error hook still ends.
        if on_error:
            told = ExceptionContextImpl(
                error, None, connection.engine, connection.dialect, connection, cursor, sql,
                parameters, context, False, True, False,
            )  # fmt: skip
            for listener in on_error:
                listener(told)
        else:
            _after(dispatch, connection, cursor, sql, parameters, context, several)
        raise
    _after(dispatch, connection, cursor, sql, parameters, context, several)


def _run_many(cursor, sql: str, parameters, returning: bool) -> None:
    if returning:
        cursor.executemany(sql, parameters, returning=True)
    else:
        cursor.executemany(sql, parameters)


def _after(dispatch, connection, cursor, sql, parameters, context, several) -> None:
    for listener in dispatch.after_cursor_execute:
        listener(connection, cursor, sql, parameters, context, several)


def _taker(names: tuple[str, ...]) -> Callable[[dict], tuple]:
    """A row's values for `names` as a tuple, taken in C (itemgetter) at every statement."""
    if not names:
        return lambda _row: ()
    if len(names) == 1:
        [name] = names
        return lambda row: (row[name],)
    return itemgetter(*names)


def _values(compiled: _Compiled, row: dict):
    if compiled.fixed:
        row = {**compiled.fixed, **row}
    values = list(compiled.take(row))
    for i, process in compiled.converted:  # only the columns whose type converts (a time, JSON)
        values[i] = process(values[i])
    return values if compiled.positional else dict(zip(compiled.names, values, strict=True))


def _wrapped(connection: Connection | Direct, raw, cursor, sql: str, parameters, error) -> exc.DBAPIError:
    """The DBAPI's error as Core would raise it. A connection the database dropped is not reused,
    nor, as in Core, the pool's others opened before now: a server restarted drops them all."""
    dialect = connection.dialect
    gone = dialect.is_disconnect(error, raw, cursor)
    if gone:
        connection.engine.pool._invalidate(connection.connection, error, _checkin=False)
        connection.invalidate(error)
    return exc.DBAPIError.instance(
        sql, parameters, error, dialect.loaded_dbapi.Error, connection_invalidated=gone, dialect=dialect
    )
