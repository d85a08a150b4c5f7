"""A booking waiting for a manager's sign-off holds nothing: its conversation takes new messages
meanwhile, a second large booking there waits on its own, and the outcome of each lands on its own
answer, at its own place. What the model is shown stays a valid message sequence all along."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

from sqlalchemy import update

from inventory_ai.assistant.types import ModelReply, ModelRequest
from inventory_ai.extensions import db
from inventory_ai.models import Signoff, utcnow
from tests.support.clients import client_for
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use
from tests.support.stock import level

BIG = booking(1000, "inbound")  # 1000 kg of M001 at CNY 6.20: 6,200 > 5,000


def model(app) -> ScriptedProvider:
    """Books when asked to book ("入库" in the question), answers plainly otherwise, and answers
    each tool result with what it said."""

    def step(request: ModelRequest) -> ModelReply:
        last = request.messages[-1]
        if last.role == "user":
            if "入库" in last.content:
                return calls(call("record_stock_movement", BIG, "call_same_id"))
            return answer("库存还有很多。")
        return answer("结果：" + last.content)

    return use(app, ScriptedProvider(*[step] * 12))


def valid_sequence(request: ModelRequest) -> None:
    """Every assistant message with tool calls is followed by one tool message per call, in order."""
    messages = list(request.messages)
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_calls:
            answered = messages[i + 1 : i + 1 + len(m.tool_calls)]
            assert [a.role for a in answered] == ["tool"] * len(m.tool_calls), messages
            assert [a.tool_call_id for a in answered] == [c.id for c in m.tool_calls]
        if m.role == "tool":
            assert messages[i - 1].role in ("assistant", "tool")


def waiting(staff, text="收货入库 1000 公斤高筋面粉", conversation_id=None) -> dict:
    asked = staff.post("/api/v1/chat", json={"message": text, "conversation_id": conversation_id}).json
    assert asked["status"] == "awaiting_confirmation", asked
    decided = staff.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}
    ).json
    assert decided["status"] == "awaiting_signoff", decided
    return decided


def call_id_of(view: dict) -> str:
    return view["rounds"][0]["tool_calls"][0]["id"]


def test_a_conversation_waiting_for_a_signoff_answers_a_new_message_normally(app):
    scripted = model(app)
    staff = client_for(app, "staff")
    first = waiting(staff)
    later = staff.post(
        "/api/v1/chat", json={"message": "还有多少高筋面粉？", "conversation_id": first["conversation_id"]}
    )
    assert later.status_code == 200, later.json
    assert later.json["status"] == "completed" and later.json["reply"] == "库存还有很多。"
    assert later.json["conversation_id"] == first["conversation_id"]
    # The waiting booking is untouched: still waiting, on its message and in the list.
    assert staff.get(f"/api/v1/chat/messages/{first['message_id']}").json["status"] == "awaiting_signoff"
    assert staff.get(f"/api/v1/chat/messages/{first['message_id']}").json["signoff"] is None
    assert [s["tool_call_id"] for s in client_for(app, "manager").get("/api/v1/approvals").json] == [
        call_id_of(first)
    ]
    # The later question's model call saw the waiting booking paired with a tool message saying so.
    request = scripted.requests[-1]
    valid_sequence(request)
    [said] = [m for m in request.messages if m.role == "tool"]
    assert json.loads(said.content)["status"] == "awaiting_signoff"
    assert "sign-off" in json.loads(said.content)["message"]
    assert level() == Decimal("100")


def test_the_signoff_resumes_its_own_answer_from_its_own_place(app):
    scripted = model(app)
    staff = client_for(app, "staff")
    first = waiting(staff)
    later = staff.post(
        "/api/v1/chat", json={"message": "顺便问一下库存", "conversation_id": first["conversation_id"]}
    ).json
    assert later["status"] == "completed"
    manager = client_for(app, "manager")
    signed = manager.post(
        f"/api/v1/approvals/{call_id_of(first)}/decision", json={"decision": "approve", "reason": "月底备货"}
    ).json
    assert signed["status"] == "approved" and signed["answer_status"] == "completed"
    assert level() == Decimal("1100")
    # The resumed answer's model call: its own question and rounds, nothing asked after it.
    resumed = scripted.requests[-1]
    valid_sequence(resumed)
    asked = [m.content for m in resumed.messages if m.role == "user"]
    assert asked[-1] == "收货入库 1000 公斤高筋面粉" and "顺便问一下库存" not in asked
    assert resumed.messages[-1].role == "tool" and "level_after" in resumed.messages[-1].content
    # The outcome is on that message; the later one is as it was.
    view = staff.get(f"/api/v1/chat/messages/{first['message_id']}").json
    assert view["status"] == "completed" and "level_after" in view["reply"]
    assert view["signoff"]["decision"] == "approved" and view["signoff"]["by"] == "manager"
    assert view["signoff"]["reason"] == "月底备货" and view["signoff"]["at"].endswith("+00:00")
    assert staff.get(f"/api/v1/chat/messages/{later['message_id']}").json["reply"] == "库存还有很多。"
    # The conversation lists both answers in the order they were asked.
    transcript = staff.get(f"/api/v1/conversations/{first['conversation_id']}").json["messages"]
    assert [m.get("message_id") for m in transcript if m["role"] == "assistant"] == [
        first["message_id"],
        later["message_id"],
    ]
    # A question after it all sees the decided booking with its result, in a valid sequence.
    staff.post("/api/v1/chat", json={"message": "好的", "conversation_id": first["conversation_id"]})
    valid_sequence(scripted.requests[-1])


def test_a_second_large_booking_in_the_same_conversation_waits_on_its_own(app):
    scripted = model(app)
    staff = client_for(app, "staff")
    first = waiting(staff)
    second = waiting(staff, "再入库 1000 公斤", first["conversation_id"])
    assert second["message_id"] != first["message_id"]
    valid_sequence(scripted.requests[-1])
    manager = client_for(app, "manager")
    listed = [s["tool_call_id"] for s in manager.get("/api/v1/approvals").json]
    assert listed == [call_id_of(first), call_id_of(second)]
    rejected = manager.post(
        f"/api/v1/approvals/{call_id_of(second)}/decision", json={"decision": "reject", "reason": "重复了"}
    ).json
    assert rejected["status"] == "rejected" and level() == Decimal("100")
    assert [s["tool_call_id"] for s in manager.get("/api/v1/approvals").json] == [call_id_of(first)]
    assert staff.get(f"/api/v1/chat/messages/{first['message_id']}").json["status"] == "awaiting_signoff"
    view = staff.get(f"/api/v1/chat/messages/{second['message_id']}").json
    assert view["status"] == "completed"
    assert view["signoff"] == {
        "decision": "rejected",
        "by": "manager",
        "at": view["signoff"]["at"],
        "reason": "重复了",
    }
    manager.post(f"/api/v1/approvals/{call_id_of(first)}/decision", json={"decision": "approve"})
    assert level() == Decimal("1100")


def test_the_requester_may_still_withdraw_after_the_conversation_went_on(app):
    model(app)
    staff = client_for(app, "staff")
    first = waiting(staff)
    staff.post("/api/v1/chat", json={"message": "库存呢", "conversation_id": first["conversation_id"]})
    withdrawn = staff.post(f"/api/v1/chat/messages/{first['message_id']}/cancel").json
    assert withdrawn["status"] == "cancelled"
    assert withdrawn["signoff"]["decision"] == "withdrawn" and withdrawn["signoff"]["by"] == "staff"
    late = client_for(app, "manager").post(
        f"/api/v1/approvals/{call_id_of(first)}/decision", json={"decision": "approve"}
    )
    assert late.status_code == 409 and level() == Decimal("100")


def test_an_expired_signoff_shows_as_expired_when_its_answer_is_looked_at(app):
    model(app)
    staff = client_for(app, "staff")
    first = waiting(staff)
    staff.post("/api/v1/chat", json={"message": "库存呢", "conversation_id": first["conversation_id"]})
    db.session.execute(update(Signoff).values(expires_at=utcnow() - timedelta(minutes=1)))
    db.session.commit()
    view = staff.get(f"/api/v1/chat/messages/{first['message_id']}").json  # nobody listed /approvals
    assert view["status"] == "completed" and "过期" in view["reply"]
    assert view["signoff"]["decision"] == "expired" and view["signoff"]["by"] is None
    assert level() == Decimal("100")


def test_the_latest_answer_waiting_for_its_requester_still_holds_the_conversation(app):
    model(app)
    staff = client_for(app, "staff")
    asked = staff.post("/api/v1/chat", json={"message": "入库 1000 公斤"}).json
    assert asked["status"] == "awaiting_confirmation"
    busy = staff.post("/api/v1/chat", json={"message": "还有吗", "conversation_id": asked["conversation_id"]})
    assert busy.status_code == 409 and "confirmation" in busy.json["error"]["message"]
