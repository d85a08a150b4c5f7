"""Traces as the outside checks read them: gunicorn as `make serve` runs it, with only
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and OTEL_BSP_SCHEDULE_DELAY
set, exporting to a real OTLP/HTTP endpoint (an in-process receiver decoding each request with
opentelemetry-proto); a booking approved over HTTP is matched to what arrives through the trace id
the ledger and the admin API give."""

from __future__ import annotations

import pytest
import requests
from sqlalchemy import create_engine, select

from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, StockMovement, User
from tests.support.serving import serve_gunicorn
from tests.support.traces import OtlpReceiver

HTTPS = {"X-Forwarded-Proto": "https"}


@pytest.fixture
def exporting(database_url, tmp_path):
    """(base URL, the receiver, the database's URL): two gunicorn workers exporting to the receiver."""
    with OtlpReceiver() as receiver:
        otel = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        for base, server in serve_gunicorn(database_url, tmp_path, workers=2, **otel):
            yield base, receiver, database_url
            log = server.log_path.read_text()
            assert (
                "Traceback" not in log
                and "Failed to detach" not in log
                and "Exception while exporting" not in log
            )


def token_session(base: str, app, username: str, scopes: tuple[str, ...]) -> requests.Session:
    """A script's session: a bearer token of `username`'s (the session cookie is https-only)."""
    with app.app_context():
        _, plain = issue_token(
            db.session.query(User).filter_by(username=username).one(), "traces", scopes=scopes
        )
        db.session.commit()
    http = requests.Session()
    http.headers.update({**HTTPS, "Authorization": f"Bearer {plain}"})
    return http


def test_an_approved_booking_is_found_in_the_exported_traces_by_its_ledger_trace_id(exporting, app_with):
    base, receiver, database_url = exporting
    app = app_with(url=database_url)  # the server's database, for its tokens
    staff = token_session(base, app, "staff", ("read", "chat", "decide"))
    asked = staff.post(f"{base}/api/v1/chat", json={"message": "高筋面粉出库5公斤"}, timeout=60)
    assert asked.status_code == 200 and asked.json()["status"] == "awaiting_confirmation", asked.text
    [pending] = asked.json()["pending"]
    answer_trace = asked.headers["traceresponse"].split("-")[1]
    decided = staff.post(
        f"{base}/api/v1/chat/messages/{asked.json()['message_id']}/decision",
        json={"decision": "approve"},
        timeout=60,
    )
    assert decided.status_code == 200 and decided.json()["status"] == "completed", decided.text

    engine = create_engine(database_url)
    with engine.connect() as connection:
        movement = connection.execute(
            select(StockMovement.id, StockMovement.trace_id).where(
                StockMovement.idempotency_key == f"chat:{pending['tool_call_id']}"
            )
        ).one()
        event_traces = set(
            connection.scalars(
                select(AuditEvent.trace_id).where(
                    AuditEvent.message_id == asked.json()["message_id"], AuditEvent.status == "success"
                )
            )
        )
    engine.dispose()
    assert movement.trace_id and event_traces == {movement.trace_id}
    admin = token_session(base, app, "admin", ("read", "admin"))
    listed = admin.get(
        f"{base}/api/v1/admin/stock/movements", params={"trace_id": movement.trace_id}, timeout=30
    )
    assert [m["trace_id"] for m in listed.json()["items"]] == [movement.trace_id]

    def arrived(spans) -> bool:
        names = {(s.trace_id, s.name) for s in spans}
        return {
            (movement.trace_id, "decision approve"),
            (movement.trace_id, "execute_tool record_stock_movement"),
            (movement.trace_id, "POST /api/v1/chat/messages/<message_id>/decision"),
            (answer_trace, "invoke_agent"),
            (answer_trace, "POST /api/v1/chat"),
        } <= names  # the request's span ends last, and may come in a later batch

    spans = receiver.wait_for(arrived)
    booked = spans.of_trace(movement.trace_id)
    decision = booked.one("decision approve")
    tool = booked.one("execute_tool record_stock_movement")
    assert tool.parent_id == decision.span_id
    assert tool.attributes["gen_ai.tool.call.id"] == pending["tool_call_id"]
    assert tool.attributes["inventory_ai.tool.outcome"] == "success"
    assert booked.one("POST /api/v1/chat/messages/<message_id>/decision") in booked.ancestors(decision)
    assert answer_trace in {linked for linked, _ in decision.links}
    assert {s.service for s in spans} == {"inventory_ai"}

    answered = spans.of_trace(answer_trace)
    model_call = answered.one("chat offline")
    assert model_call.attributes["gen_ai.provider.name"] == "offline"
    assert model_call.attributes["gen_ai.operation.name"] == "chat"
    waiting = answered.one("execute_tool record_stock_movement")
    assert waiting.attributes["inventory_ai.tool.outcome"] == "awaiting_approval"
    assert answered.one("POST /api/v1/chat").parent_id is None
