"""A stream whose reader goes away (a reload, a closed tab, a dropped connection) does not stop its
answer: the server reads it to its end and stores it. Only a cancel stops an answer."""

from __future__ import annotations

from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage
from tests.support.clients import AuthActions
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


def test_an_answer_whose_reader_went_away_runs_to_its_end(app):
    model = use(app, ScriptedProvider(calls(call("list_low_stock", {})), answer("这些原料低于补货点。")))
    staff = app.test_client()
    AuthActions(staff).login("staff")
    response = staff.post(
        "/api/v1/chat",
        json={"message": "哪些原料库存不足？"},
        headers={"Accept": "text/event-stream"},
        buffered=False,
    )
    chunks = iter(response.response)
    first = next(chunks)  # `start`: then the page is reloaded
    assert b"event: start" in first
    response.close()
    message = db.session.scalar(
        db.select(ChatMessage).where(ChatMessage.role == "assistant").order_by(ChatMessage.created_at.desc())
    )
    db.session.refresh(message)
    assert message.status == "completed" and message.content == "这些原料低于补货点。"
    assert len(model.requests) == 2  # the model was asked again after the tool round, unread
    view = staff.get(f"/api/v1/chat/messages/{message.id}").json
    assert view["status"] == "completed" and view["rounds"][0]["results"][0]["status"] == "success"
