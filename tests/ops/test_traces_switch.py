"""What switches traces on, and what they are exported with: OpenTelemetry's own variables only
(inventory_ai/tracing.py); and a sign-off, whose span links both the answer and the approval that
asked for it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from inventory_ai import tracing
from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.clients import AuthActions
from tests.support.factories import MaterialFactory, PendingBookingFactory, StockLevelFactory
from tests.support.traces import recording

OTEL = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_TRACES_EXPORTER",
    "OTEL_SDK_DISABLED",
)


@pytest.fixture
def env(monkeypatch):
    for name in OTEL:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_nothing_set_means_no_traces_and_an_endpoint_means_traces(env):
    assert not tracing.wanted()
    env.setenv("OTEL_SERVICE_NAME", "inventory_ai")  # a name alone exports nothing
    assert not tracing.wanted()
    env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert tracing.wanted()
    env.setenv("OTEL_SDK_DISABLED", "true")
    assert not tracing.wanted()
    env.delenv("OTEL_SDK_DISABLED")
    env.setenv("OTEL_TRACES_EXPORTER", "none")
    assert not tracing.wanted()


def test_the_protocol_variable_chooses_http_protobuf_or_grpc(env):
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert isinstance(tracing._exporter(), Http)  # the specification's default
    env.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert isinstance(tracing._exporter(), Grpc)
    env.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")  # the traces' own wins
    assert isinstance(tracing._exporter(), Http)


def test_a_sign_off_is_a_span_linked_to_the_answer_and_to_the_approval_that_asked_for_it(app_with):
    with recording() as recorded:
        app = app_with()
        with app.app_context():
            material = MaterialFactory(unit_cost=Decimal("500"))
            StockLevelFactory(material=material, warehouse="WH01", quantity=Decimal("100"))
            staff = db.session.query(User).filter_by(username="staff").one()
            arguments = {"material": material.code, "warehouse": "WH01", "movement_type": "outbound",
                         "quantity": 20, "unit": "kg", "reason": "大批领料"}  # fmt: skip
            record = PendingBookingFactory(user=staff, arguments=arguments)  # 10,000 CNY
            call_id, message_id = record.call_id, record.round.message_id
        requester = app.test_client()
        AuthActions(requester).login("staff")
        # The factory's answer was written without a model, so the approval is its first trace.
        approved = requester.post(
            f"/api/v1/chat/messages/{message_id}/decision", json={"decision": "approve"}
        )
        assert approved.json["status"] == "awaiting_signoff"
        approval_trace = approved.headers["traceresponse"].split("-")[1]
        asked = recorded.spans().of_trace(approval_trace)
        assert asked.one("execute_tool record_stock_movement").attributes["inventory_ai.tool.outcome"] == (
            "awaiting_signoff"
        )

        signer = app.test_client()
        AuthActions(signer).login("manager")
        signed = signer.post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"})
        assert signed.status_code == 200 and signed.json["status"] == "approved"
        spans = recorded.spans().of_trace(signed.headers["traceresponse"].split("-")[1])
        decision = spans.one("decision sign_off")
        assert decision.attributes["inventory_ai.decision.approved"] is True
        assert approval_trace in {linked for linked, _ in decision.links}
        booked = spans.one("execute_tool record_stock_movement")
        assert (
            booked.parent_id == decision.span_id
            and booked.attributes["inventory_ai.tool.outcome"] == "success"
        )
