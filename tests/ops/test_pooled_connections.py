"""The database's pooled connections: one the server ended, or one idle past the limit whose ping fails, is
replaced before a request uses it; healthy ones are kept; an exhausted pool is a 503 with Retry-After."""

from __future__ import annotations

import threading

import psycopg
import pytest
from sqlalchemy import create_engine, event, text

from inventory_ai import database
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from tests.support.databases import PASSWORD


def _postgresql_only(session) -> None:
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("connections to a PostgreSQL server; a SQLite file has none")


def test_a_connection_the_database_server_ended_is_replaced_before_a_request_uses_it(client, session):
    """PostgreSQL restarted, or an administrator ended the app's sessions: the pooled connections
    are dead, and the next requests are answered on new ones, not refused."""
    _postgresql_only(session)
    assert client.get("/readyz").status_code == 200
    ended = session.execute(
        text("SELECT array_agg(pid) FROM pg_stat_activity WHERE datname = current_database()")
    ).scalar()
    session.remove()  # every connection of the app back in its pool, idle
    admin = create_engine(session.get_bind().url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:  # each waits (up to 5 s) until its backend has gone
            conn.execute(
                text("SELECT pg_terminate_backend(pid, 5000) FROM unnest(:ended) AS pid"), {"ended": ended}
            )
    finally:
        admin.dispose()
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["database"] == "ok"
    assert session.execute(text("SELECT pg_backend_pid()")).scalar() not in ended


def test_healthy_pooled_connections_are_kept_not_reopened(client, session):
    _postgresql_only(session)
    assert client.get("/readyz").status_code == 200
    opened = []
    event.listen(session.get_bind(), "connect", lambda *_: opened.append(1))
    for _ in range(5):
        assert client.get("/readyz").status_code == 200
    assert opened == []


def test_a_connection_idle_past_the_limit_is_pinged_and_replaced_when_the_ping_fails(
    client, session, monkeypatch
):
    """A NAT or load balancer past its idle timeout drops a connection without a word: only a round
    trip finds out. A connection idle that long is pinged first; one whose ping fails is replaced
    and the request answered. A busy pool is not pinged."""
    _postgresql_only(session)
    dialect = session.get_bind().dialect
    pings, real_ping, requests_thread = [], dialect.do_ping, threading.get_ident()

    def ping(dbapi_connection):
        if threading.get_ident() != requests_thread:  # the heartbeat's own checkouts
            return real_ping(dbapi_connection)
        pings.append(dbapi_connection)
        if len(pings) == 2:  # the second: as a connection dropped on the way answers
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return real_ping(dbapi_connection)

    monkeypatch.setattr(dialect, "do_ping", ping)
    for _ in range(3):
        assert client.get("/readyz").status_code == 200
    assert pings == []  # not idle long: no round trip
    monkeypatch.setattr(database, "PING_AFTER_IDLE_SECONDS", 0.0)  # as if idle for minutes
    assert client.get("/readyz").status_code == 200
    assert len(pings) == 1
    opened = []  # by the requests' thread, as the pings above
    event.listen(
        session.get_bind(),
        "connect",
        lambda *_: threading.get_ident() == requests_thread and opened.append(1),
    )
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["database"] == "ok"
    assert len(pings) == 2 and opened == [1]  # the failed one replaced by a new connection


def test_an_exhausted_connection_pool_is_a_503_with_retry_after(app_with, tmp_path):
    """Overload is not a crash: every pooled connection busy past the timeout answers 503."""
    config = config_for_tests("")
    config.db_pool_size, config.db_pool_timeout = 1, 0.2
    app = app_with(config)
    client = app.test_client()
    assert (
        client.post("/api/v1/auth/login", json={"username": "staff", "password": PASSWORD}).status_code == 200
    )
    with app.app_context():
        held = [db.engine.connect(), db.engine.connect()]  # the pool (1) and its overflow (1)
        try:
            response = client.get("/api/v1/conversations")
        finally:
            for connection in held:
                connection.close()
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert response.json["error"]["code"] == "busy" and "Traceback" not in response.get_data(as_text=True)
    assert client.get("/api/v1/conversations").status_code == 200  # and it recovers at once
