"""The app around the warehouse: configuration, health probes, request ids and errors in logs."""

from __future__ import annotations

import io
import json
import threading

import psycopg
import pytest
from sqlalchemy import create_engine, event, text

from inventory_ai import create_app, database
from inventory_ai.config import Config, ConfigError, config_for_tests
from inventory_ai.logging import configure_logging


def test_healthz_and_readyz(client):
    assert client.get("/healthz").json == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["database"] == "ok"


def test_readyz_is_503_when_the_database_is_unreachable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = create_app(config_for_tests(f"sqlite:///{tmp_path}/missing/dir/db.sqlite"))
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.json == {"status": "unavailable", "database": "unreachable"}


def test_production_without_a_secret_key_refuses_to_start(tmp_path, monkeypatch):
    monkeypatch.setenv("INVENTORY_AI_ENV", "production")
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    with pytest.raises(ConfigError, match="INVENTORY_AI_SECRET_KEY"):
        Config.from_env(tmp_path)


def test_development_generates_a_secret_key_once(tmp_path, monkeypatch):
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    monkeypatch.delenv("INVENTORY_AI_ENV", raising=False)
    first = Config.from_env(tmp_path).secret_key
    assert len(first) >= 32
    assert Config.from_env(tmp_path).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_environment_defaults_follow_the_contract(tmp_path, monkeypatch):
    for name in (
        "DASHSCOPE_API_KEY",
        "INVENTORY_AI_LLM_PROVIDER",
        "INVENTORY_AI_LLM_MODEL",
        "INVENTORY_AI_MAX_TOOL_ITERATIONS",
        "INVENTORY_AI_DATABASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    config = Config.from_env(tmp_path)
    assert (config.llm_provider, config.llm_model, config.max_tool_iterations) == ("offline", "qwen-plus", 5)
    assert config.database_url == f"sqlite:///{tmp_path / 'inventory_ai.db'}"
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    assert Config.from_env(tmp_path).llm_provider == "dashscope"
    monkeypatch.setenv("INVENTORY_AI_MAX_TOOL_ITERATIONS", "many")
    with pytest.raises(ConfigError, match="whole number"):
        Config.from_env(tmp_path)


def test_request_id_is_returned_and_on_every_log_line(client):
    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/api/v1/nowhere", headers={"X-Request-ID": "req-abc-123"})
    assert response.headers["X-Request-ID"] == "req-abc-123"
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert lines and all(line["request_id"] == "req-abc-123" for line in lines)
    assert any(line["event"] == "request" and line["status"] == 404 for line in lines)
    generated = client.get("/healthz").headers["X-Request-ID"]
    assert len(generated) == 32
    forged = client.get("/healthz", headers={"X-Request-ID": "<script>alert(1)</script>"}).headers[
        "X-Request-ID"
    ]
    assert "<" not in forged


def test_unknown_api_path_is_json_and_unknown_page_is_html(client):
    api = client.get("/api/v1/nowhere")
    assert api.status_code == 404 and api.json["error"]["code"] == "not_found"
    page = client.get("/nowhere")
    assert page.status_code == 404 and page.mimetype == "text/html"


def test_login_page_is_served(client):
    response = client.get("/login")
    assert response.status_code == 200
    assert "csrf_token" in response.get_data(as_text=True)


def test_an_unexpected_error_is_logged_with_where_it_happened_and_nothing_secret(app, client):
    @app.get("/boom")
    def boom():
        raise RuntimeError("upstream refused key sk-abcdefghijklmnopqrstuvwx at /etc/inventory/secret.yml")

    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/boom")
    assert response.status_code == 500 and "sk-" not in response.get_data(as_text=True)
    line = next(json.loads(x) for x in buffer.getvalue().splitlines() if "unhandled_error" in x)
    assert line["error_type"] == "RuntimeError" and "test_app:boom:" in line["error_at"][-1]
    assert line["error_message"] == "upstream refused key [redacted] at [path]"
    assert "Traceback" not in buffer.getvalue() and "sk-abcdefghijkl" not in buffer.getvalue()


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
