"""PostgreSQL ends a connection in the middle of a request (`pg_terminate_backend`, as under a
failover or an administrator's hand): a safe read is retried once on a new connection; a write is
answered JSON 503 with Retry-After; the teardown's rollback on the dead connection never raises
(it was gunicorn's HTML 500 with a raw traceback). The test ends connections of its own database
only, from a connection of its own."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, event, text

from inventory_ai.extensions import db


@pytest.fixture
def terminate(session):
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("ends PostgreSQL connections; a SQLite file has none")
    admin = create_engine(session.get_bind().url.set(database="postgres"), isolation_level="AUTOCOMMIT")

    def end(pid: int) -> None:
        with admin.connect() as conn:  # waits (up to 5 s) until the backend has gone
            conn.execute(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})

    yield end
    admin.dispose()


@contextmanager
def ended_before(statement_word: str, terminate, times: int = 1):
    """Ends the connection of the next `times` statements that start with `statement_word`, just
    before each is sent: it fails on a connection the server has closed."""
    engine, left = db.engine, [times]

    def before(conn, _cursor, statement, *_args):
        if left[0] > 0 and statement.lstrip().upper().startswith(statement_word):
            left[0] -= 1
            terminate(conn.connection.dbapi_connection.info.backend_pid)

    event.listen(engine, "before_cursor_execute", before)
    try:
        yield left
    finally:
        event.remove(engine, "before_cursor_execute", before)


def test_a_read_whose_connection_is_ended_is_retried_once_and_answered(client, auth, terminate):
    auth.login("staff")
    with ended_before("SELECT", terminate) as left:
        response = client.get("/api/v1/conversations")
    assert left == [0] and response.status_code == 200, response.get_data(as_text=True)


def test_a_read_that_fails_twice_is_json_503_with_retry_after(client, auth, terminate):
    auth.login("staff")
    with ended_before("SELECT", terminate, times=2):
        response = client.get("/api/v1/conversations")
    assert response.status_code == 503 and response.json["error"]["code"] == "busy"
    assert response.headers["Retry-After"]


def test_a_write_whose_connection_is_ended_is_json_503_not_retried(client, auth, terminate):
    auth.login("staff")
    with ended_before("INSERT", terminate):
        response = client.post("/api/v1/chat", json={"message": "面粉还有多少"})
    assert response.status_code == 503 and response.json["error"]["code"] == "busy"
    assert response.headers["Retry-After"]
    assert client.get("/api/v1/conversations").status_code == 200  # and the next one is served


def test_the_teardown_rollback_on_an_ended_connection_never_raises(app, client, auth, terminate):
    armed, ended = [], []

    @app.after_request
    def end_it_now(response):  # the view has read: its transaction is open when the server ends it
        if armed and not ended and db.session().in_transaction():
            ended.append(db.session.connection().connection.dbapi_connection.info.backend_pid)
            terminate(ended[0])
        return response

    auth.login("staff")
    armed.append(True)
    response = client.get("/api/v1/conversations")
    assert ended and response.status_code == 200
    assert client.get("/api/v1/conversations").status_code == 200
