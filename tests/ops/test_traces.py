"""Traces in the GenAI semantic conventions (inventory_ai/tracing.py), recorded with the SDK's
in-memory exporter: a message with one tool round is one trace from its HTTP request; an approval is
a trace of its own, linked to the answer's, whose id the ledger movement and its audit event keep; a
fallback answer shows both providers; an MCP call is traced the same way; no content without the
switch. Off, nothing is recorded and nothing is kept."""

from __future__ import annotations

import io
import json

import pytest
from sqlalchemy import select

from inventory_ai import tracing
from inventory_ai.extensions import db
from inventory_ai.logging import configure_logging
from inventory_ai.models import AuditEvent, StockMovement
from tests.support.clients import client_for
from tests.support.dashscope_stub import Error, Reply
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use
from tests.support.traces import recording


@pytest.fixture
def traced(app_with):
    """(an app made while tracing is on, the spans recorded since)."""
    with recording() as recorded:
        app = app_with()
        yield app, recorded


def trace_of(response) -> str:
    """The trace a response was, from its `traceresponse` header (00-<trace>-<span>-<flags>)."""
    return response.headers["traceresponse"].split("-")[1]


def test_a_message_with_one_tool_round_is_one_trace_from_its_request(traced):
    app, recorded = traced
    use(app, ScriptedProvider(calls(call("search_materials", {"keyword": "面粉"})), answer("找到 13 种面粉")))
    client = client_for(app)
    recorded.clear()

    response = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"})
    assert response.status_code == 200, response.json
    spans = recorded.spans().of_trace(trace_of(response))

    request = spans.one("POST /api/v1/chat")
    assert request.kind == "SERVER" and request.parent_id is None
    agent = spans.one("invoke_agent")
    assert agent.parent_id == request.span_id
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.conversation.id"] == response.json["conversation_id"]
    assert agent.attributes["inventory_ai.message_id"] == response.json["message_id"]
    assert agent.attributes["inventory_ai.answer.status"] == "completed"
    assert agent.attributes["gen_ai.provider.name"] == "scripted"

    first, second = spans.named("chat scripted-1")
    for model_call in (first, second):
        assert model_call.parent_id == agent.span_id
        assert model_call.attributes["gen_ai.operation.name"] == "chat"
        assert model_call.attributes["gen_ai.provider.name"] == "scripted"
        assert model_call.attributes["gen_ai.request.model"] == "scripted-1"
        assert model_call.attributes["gen_ai.response.model"] == "scripted-1"
    assert (
        first.attributes["gen_ai.usage.input_tokens"],
        first.attributes["gen_ai.usage.output_tokens"],
    ) == (10, 5)
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)

    tool = spans.one("execute_tool search_materials")
    assert tool.parent_id == agent.span_id
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "search_materials"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    assert tool.attributes["gen_ai.tool.call.id"] == response.json["rounds"][0]["tool_calls"][0]["id"]
    assert tool.attributes["inventory_ai.tool.outcome"] == "success"
    # The tool's statements are its children; the loop's writes are the answer's.
    assert any(s.kind == "CLIENT" and "db.system.name" in s.attributes or "db.system" in s.attributes
               for s in spans.children(tool))  # fmt: skip
    assert any(s.kind == "CLIENT" for s in spans.children(agent))
    # Nothing of this message went into a trace of its own.
    assert all(
        span.trace_id == request.trace_id
        for span in recorded.spans()
        if span.name != "POST /api/v1/auth/login"
    )


def test_an_approval_books_in_its_own_trace_linked_to_the_answer_and_the_ledger_keeps_it(traced):
    app, recorded = traced
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5))), answer("已出库 5 kg")))
    client = client_for(app)

    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库5公斤"})
    assert asked.json["status"] == "awaiting_confirmation"
    answer_trace = trace_of(asked)
    [pending] = asked.json["pending"]
    waiting = recorded.spans().of_trace(answer_trace).one("execute_tool record_stock_movement")
    assert waiting.attributes["inventory_ai.tool.outcome"] == "awaiting_approval"
    assert waiting.attributes["gen_ai.tool.call.id"] == pending["tool_call_id"]

    decided = client.post(
        f"/api/v1/chat/messages/{asked.json['message_id']}/decision", json={"decision": "approve"}
    )
    assert decided.status_code == 200 and decided.json["status"] == "completed"
    decision_trace = trace_of(decided)
    assert decision_trace != answer_trace
    spans = recorded.spans().of_trace(decision_trace)

    request = spans.one("POST /api/v1/chat/messages/<message_id>/decision")
    decision = spans.one("decision approve")
    assert decision.parent_id == request.span_id
    assert decision.attributes["inventory_ai.tool_call_ids"] == (pending["tool_call_id"],)
    assert answer_trace in {linked for linked, _span in decision.links}
    booked = spans.one("execute_tool record_stock_movement")
    assert booked.parent_id == decision.span_id
    assert booked.attributes["gen_ai.tool.call.id"] == pending["tool_call_id"]
    assert booked.attributes["inventory_ai.tool.outcome"] == "success"
    going_on = spans.one("invoke_agent")  # the model answers with the result, in the same request
    assert going_on.parent_id == request.span_id and answer_trace in {t for t, _ in going_on.links}

    with app.app_context():
        movement = db.session.scalar(
            select(StockMovement).where(StockMovement.idempotency_key == f"chat:{pending['tool_call_id']}")
        )
        assert movement.trace_id == decision_trace
        event = db.session.scalar(
            select(AuditEvent).where(
                AuditEvent.action == "tool_call",
                AuditEvent.status == "success",
                AuditEvent.message_id == asked.json["message_id"],
            )
        )
        assert event.trace_id == decision_trace and event.span_id == decision.span_id
        assert movement.trace_id in {s.trace_id for s in recorded.spans()}

    admin = client_for(app, "admin")
    movements = admin.get(f"/api/v1/admin/stock/movements?trace_id={decision_trace}").json
    assert [m["id"] for m in movements["items"]] == [movement.id]
    assert movements["items"][0]["trace_id"] == decision_trace
    events = admin.get(f"/api/v1/admin/audit-events?trace_id={decision_trace}").json["items"]
    assert {(e["action"], e["status"]) for e in events} >= {("tool_call", "success")}
    assert all(e["trace_id"] == decision_trace for e in events)
    assert admin.get("/api/v1/admin/stock/movements?trace_id=not-a-trace").status_code == 422


def test_a_rejection_and_an_edit_are_spans_of_their_own(traced):
    app, recorded = traced
    use(app, ScriptedProvider(
        calls(call("record_stock_movement", booking(5))), answer("好的，不出库"),
        calls(call("record_stock_movement", booking(6))), answer("已按 4 kg 出库"),
    ))  # fmt: skip
    client = client_for(app)
    first = client.post("/api/v1/chat", json={"message": "出库5公斤"}).json
    rejected = client.post(
        f"/api/v1/chat/messages/{first['message_id']}/decision",
        json={"decision": "reject", "reason": "数错了"},
    )
    spans = recorded.spans().of_trace(trace_of(rejected))
    assert spans.one("decision reject").attributes["inventory_ai.decision.approved"] is False
    declined = spans.one("execute_tool record_stock_movement")
    assert declined.attributes["inventory_ai.tool.outcome"] == "declined" and declined.status == "UNSET"

    second = client.post(
        "/api/v1/chat", json={"message": "出库6公斤", "conversation_id": first["conversation_id"]}
    ).json
    edited = client.post(
        f"/api/v1/chat/messages/{second['message_id']}/decision",
        json={"decision": "approve", "arguments": {"quantity": 4}},
    )
    assert edited.status_code == 200
    spans = recorded.spans().of_trace(trace_of(edited))
    assert spans.one("execute_tool record_stock_movement").parent_id == spans.one("decision edit").span_id


def test_a_fallback_answer_shows_the_failed_model_and_the_provider_that_answered(recording_app, stub):
    app, recorded = recording_app(llm_fallback=("offline",))
    stub.default = Error(500, "InternalError", "the model is down")
    client = client_for(app)
    recorded.clear()

    response = client.post("/api/v1/chat", json={"message": "你好"})
    assert response.json["model"] == "offline"
    spans = recorded.spans().of_trace(trace_of(response))
    agent = spans.one("invoke_agent")
    failed, answered = spans.one("chat qwen-plus"), spans.one("chat offline")
    assert failed.parent_id == answered.parent_id == agent.span_id
    assert failed.kind == "CLIENT" and failed.status == "ERROR"
    assert failed.attributes["gen_ai.provider.name"] == "dashscope"
    assert failed.attributes["error.type"]
    # The SDK's HTTP requests to the model, through the requests instrumentation, under its call.
    http = [s for s in spans.children(failed) if s.kind == "CLIENT"]
    assert http and all(
        s.attributes.get("http.request.method", s.attributes.get("http.method")) == "POST" for s in http
    )
    assert answered.kind == "INTERNAL" and answered.attributes["gen_ai.provider.name"] == "offline"
    assert agent.attributes["gen_ai.provider.name"] == "offline"
    assert agent.attributes["gen_ai.response.model"] == "offline"


def test_a_qwen_answer_has_its_tokens_and_finish_reason(recording_app, stub):
    app, recorded = recording_app()
    stub.default = Reply(content="你好！", usage=(31, 4), finish_reason="stop")
    client = client_for(app)
    response = client.post("/api/v1/chat", json={"message": "你好"})
    [model_call] = recorded.spans().of_trace(trace_of(response)).named("chat qwen-plus")
    assert model_call.attributes["gen_ai.usage.input_tokens"] == 31
    assert model_call.attributes["gen_ai.usage.output_tokens"] == 4
    assert model_call.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert model_call.status == "UNSET"


@pytest.fixture
def recording_app(qwen_app):
    """`recording_app(**settings)`: a Qwen app (real SDK, the stub answering), traced."""
    with recording() as recorded:
        yield lambda **settings: (qwen_app(**settings), recorded)


def test_an_mcp_call_is_traced_as_a_chat_call_is(traced):
    app, recorded = traced
    with app.app_context():
        from inventory_ai.auth import issue_token
        from inventory_ai.models import User

        _, token = issue_token(db.session.query(User).filter_by(username="staff").one(), "mcp")
        db.session.commit()
    client = app.test_client()
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "search_materials", "arguments": {"keyword": "面粉"}}}  # fmt: skip
    recorded.clear()
    response = client.post("/mcp", json=rpc, headers=headers)
    assert response.status_code == 200, response.data
    assert "error" not in response.json and not response.json["result"].get("isError")

    spans = recorded.spans().of_trace(trace_of(response))
    request = spans.one("POST /mcp")
    served = spans.one("tools/call search_materials")  # the MCP SDK's own span
    assert served.attributes["mcp.method.name"] == "tools/call"
    tool = spans.one("execute_tool search_materials")
    assert served in spans.ancestors(tool) and request in spans.ancestors(tool)
    assert tool.attributes["inventory_ai.tool.outcome"] == "success"


QUESTION = "帮我查找面粉原料，结果发到 chef@example.com"
REPLY = "找到 13 种面粉"


def ask_with_a_booking(app):
    use(app, ScriptedProvider(
        calls(call("search_materials", {"keyword": "面粉"}), call("record_stock_movement", booking(3))),
        answer(REPLY),
    ))  # fmt: skip
    client = client_for(app)
    asked = client.post("/api/v1/chat", json={"message": QUESTION}).json
    client.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"})


def test_no_prompt_reply_or_argument_is_recorded_without_the_switch(traced):
    app, recorded = traced
    assert not tracing.CAPTURE_CONTENT
    ask_with_a_booking(app)
    spans = recorded.spans()
    assert spans.named("chat scripted-1") and spans.named("execute_tool record_stock_movement")
    text = spans.text()
    for content in ("面粉", "chef@", "生产领料", REPLY, "主仓库", "You are"):
        assert content not in text, content
    assert not [key for s in spans for key in s.attributes if key in CONTENT_ATTRIBUTES]


CONTENT_ATTRIBUTES = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


def test_with_the_switch_content_is_recorded_sanitised_as_logs_are(app_with, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with recording() as recorded:
        app = app_with()
        ask_with_a_booking(app)
        spans = recorded.spans()
    first = spans.named("chat scripted-1")[0]
    asked = json.loads(first.attributes["gen_ai.input.messages"])
    assert asked[-1]["role"] == "user" and "帮我查找面粉原料" in asked[-1]["parts"][0]["content"]
    assert "chef@example.com" not in spans.text() and "[redacted]" in asked[-1]["parts"][0]["content"]
    assert json.loads(first.attributes["gen_ai.system_instructions"])[0]["type"] == "text"
    said = json.loads(first.attributes["gen_ai.output.messages"])[0]
    assert [p["name"] for p in said["parts"] if p["type"] == "tool_call"] == [
        "search_materials",
        "record_stock_movement",
    ]
    assert REPLY in spans.named("chat scripted-1")[-1].attributes["gen_ai.output.messages"]
    searched = spans.one("execute_tool search_materials")
    assert json.loads(searched.attributes["gen_ai.tool.call.arguments"]) == {"keyword": "面粉"}
    assert "M001" in searched.attributes["gen_ai.tool.call.result"]


def test_log_lines_inside_a_request_carry_its_trace(traced):
    app, _recorded = traced
    client = client_for(app)
    lines = io.StringIO()
    configure_logging(production=True, file=lines)  # JSON lines, as production writes them
    response = client.get("/api/v1/auth/me")
    [access] = [json.loads(line) for line in lines.getvalue().splitlines() if '"request"' in line]
    assert access["trace_id"] == trace_of(response)
    assert access["span_id"] == response.headers["traceresponse"].split("-")[2]


def test_off_nothing_is_recorded_and_no_trace_is_kept(app, client, auth):
    assert not tracing.ENABLED
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(2))), answer("好")))
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "出库2公斤"})
    assert "traceresponse" not in asked.headers
    client.post(f"/api/v1/chat/messages/{asked.json['message_id']}/decision", json={"decision": "approve"})
    [pending] = asked.json["pending"]
    movement = db.session.scalar(
        select(StockMovement).where(StockMovement.idempotency_key == f"chat:{pending['tool_call_id']}")
    )
    assert movement is not None and movement.trace_id is None
    assert db.session.scalar(select(AuditEvent.id).where(AuditEvent.trace_id.is_not(None))) is None


def test_a_streamed_answer_is_the_same_trace_and_a_reader_who_leaves_leaves_no_context(traced, caplog):
    app, recorded = traced
    use(app, ScriptedProvider(calls(call("search_materials", {"keyword": "面粉"})), answer("找到了"),
                              calls(call("search_materials", {"keyword": "糖"})), answer("也找到了")))  # fmt: skip
    client = client_for(app)
    streamed = client.post(
        "/api/v1/chat", json={"message": "帮我查找面粉原料"}, headers={"Accept": "text/event-stream"}
    )
    assert b"event: done" in streamed.data
    spans = recorded.spans().of_trace(trace_of(streamed))
    agent = spans.one("invoke_agent")
    assert agent.parent_id == spans.one("POST /api/v1/chat").span_id
    assert spans.one("execute_tool search_materials").parent_id == agent.span_id

    left = client.post(
        "/api/v1/chat", json={"message": "再查糖"}, headers={"Accept": "text/event-stream"}, buffered=False
    )
    assert b"start" in next(iter(left.response))  # the first event, and then the reader goes away
    left.close()
    after = client.get("/api/v1/auth/me")  # the next request on this thread starts its own trace
    spans = recorded.spans().of_trace(trace_of(after))
    root = spans.one("GET /api/v1/auth/me")
    assert root.parent_id is None and all(s is root or root in spans.ancestors(s) for s in spans)
    assert "Failed to detach context" not in caplog.text
