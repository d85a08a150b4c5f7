"""Answers that survive a model outage or an empty budget: the fallback chain and the daily token
budget, over HTTP with the real SDK against the DashScope-protocol stub."""

from __future__ import annotations

import pytest
from sqlalchemy import event, select

from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, User
from inventory_ai.services import usage
from tests.support.clients import AuthActions
from tests.support.dashscope_stub import Error, Reply


def by_model(**behaviours):
    """A stub that answers by the model the request names (the body's `model`)."""

    def answer(body):
        return behaviours[body["model"]]

    return answer


@pytest.fixture
def qwen(qwen_app):
    def make(**settings):
        app = qwen_app(**settings)
        client = app.test_client()
        AuthActions(client).login("staff")
        return app, client

    return make


DOWN = Error(500, "InternalError", "the model is down")


def test_a_failing_model_hands_over_to_the_next_qwen_model(qwen, stub):
    app, client = qwen(llm_fallback=("qwen-turbo", "offline"))
    stub.default = by_model(**{"qwen-plus": DOWN, "qwen-turbo": Reply(content="我是备用模型")})
    body = client.post("/api/v1/chat", json={"message": "你好"}).json
    assert body["status"] == "completed" and body["reply"] == "我是备用模型"
    assert body["model"] == "qwen-turbo"
    asked = [r["model"] for r in stub.requests]
    assert asked.count("qwen-plus") == 3 and asked[-1] == "qwen-turbo"  # its retries, then the next


def test_when_every_qwen_model_fails_the_offline_assistant_answers_from_the_database(qwen, stub):
    app, client = qwen(llm_fallback=("qwen-turbo", "offline"))
    stub.default = by_model(**{"qwen-plus": DOWN, "qwen-turbo": DOWN})
    body = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json
    assert body["status"] == "completed" and body["model"] == "offline"
    [call] = body["rounds"][0]["tool_calls"]
    assert call["name"] == "search_materials" and "高筋面粉" in body["rounds"][0]["results"][0]["content"]
    with app.app_context():
        stored = db.session.get(ChatMessage, body["message_id"])
        assert stored.model == "offline"  # the record says who wrote it, as the answer did


def test_with_no_fallback_left_the_answer_fails_and_then_503_with_retry_after(qwen, stub):
    app, client = qwen(llm_fallback=("qwen-turbo",))
    stub.default = by_model(**{"qwen-plus": DOWN, "qwen-turbo": DOWN})
    failed = client.post("/api/v1/chat", json={"message": "你好"})
    assert failed.status_code == 200 and failed.json["status"] == "failed" and failed.json["model"] is None
    # Both breakers are open now: the next message is told when to come back, without waiting.
    refused = client.post("/api/v1/chat", json={"message": "你好"})
    assert refused.status_code == 503 and refused.json["error"]["code"] == "model_unavailable"
    assert int(refused.headers["Retry-After"]) > 0


def test_the_503s_retry_after_is_the_breakers_not_the_chat_limits_window(qwen, stub):
    """Flask-Limiter raised a response's own Retry-After to the end of the chat limit's window
    (here up to an hour) though the user had messages left: the breaker's wait is the one to say."""
    app, client = qwen(llm_fallback=("qwen-turbo",))
    app.config["CHAT_RATE_LIMIT"] = "100 per hour"
    stub.default = by_model(**{"qwen-plus": DOWN, "qwen-turbo": DOWN})
    assert client.post("/api/v1/chat", json={"message": "你好"}).json["status"] == "failed"
    refused = client.post("/api/v1/chat", json={"message": "你好"})
    assert refused.status_code == 503 and 0 < int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Limit"] == "100"


def test_the_daily_token_budget_is_per_user_and_then_the_offline_assistant_answers(qwen, stub):
    app, client = qwen(daily_token_budget=30, llm_fallback=("offline",))
    stub.default = Reply(content="好的", usage=(12, 7))  # 19 tokens an answer
    first = client.post("/api/v1/chat", json={"message": "你好"}).json
    second = client.post("/api/v1/chat", json={"message": "还在吗"}).json
    assert first["model"] == second["model"] == "qwen-plus"  # 19, then 38 tokens used
    third = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json
    assert third["model"] == "offline" and third["status"] == "completed"
    assert len(stub.requests) == 2  # the model was not asked again
    other = app.test_client()
    AuthActions(other).login("manager")
    assert other.post("/api/v1/chat", json={"message": "你好"}).json["model"] == "qwen-plus"


def test_past_the_budget_with_no_fallback_it_is_a_429_until_midnight(qwen, stub):
    app, client = qwen(daily_token_budget=10, llm_fallback=())
    stub.default = Reply(content="好的", usage=(12, 7))
    assert client.post("/api/v1/chat", json={"message": "你好"}).status_code == 200
    refused = client.post("/api/v1/chat", json={"message": "再来"})
    assert refused.status_code == 429 and refused.json["error"]["code"] == "token_budget_exhausted"
    assert 0 < int(refused.headers["Retry-After"]) <= 86400


def test_the_budget_reads_only_todays_calls_of_the_user(session):
    """The sum before every message goes through (user, time): today's rows, not every call the
    user ever made (through user_id alone, a cost that grew with each day of history)."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("the plan is read with SQLite's EXPLAIN QUERY PLAN")
    staff = session.scalar(select(User).filter_by(username="staff"))
    sent = []

    def keep(_conn, _cursor, statement, parameters, _context, _many):
        sent.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", keep)
    try:
        usage.tokens_today(session, staff.id)
    finally:
        event.remove(db.engine, "before_cursor_execute", keep)
    statement, parameters = next((s, p) for s, p in sent if "model_calls" in s)
    plan = session.connection().exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
    assert [row[3] for row in plan] == [
        "SEARCH model_calls USING INDEX ix_model_calls_user_created (user_id=? AND created_at>?)"
    ]
