"""A sign-off as each person reads it over the API: the manager reads the booking in their own
language, the requester's conversation list says which conversation waits or has news."""

from __future__ import annotations

from sqlalchemy import update

from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.clients import client_for
from tests.support.scripted import ScriptedProvider, booking, call, calls, use

BIG = booking(1000, "inbound")  # 1000 kg of M001 at CNY 6.20: 6,200 > 5,000


def waiting(app) -> tuple[dict, object]:
    use(app, ScriptedProvider(calls(call("record_stock_movement", BIG))))
    staff = client_for(app, "staff")
    asked = staff.post("/api/v1/chat", json={"message": "收货 1000 公斤高筋面粉"}).json
    decided = staff.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}
    )
    assert decided.json["status"] == "awaiting_signoff"
    return decided.json, staff


def test_the_manager_reads_the_booking_in_their_language_whatever_the_requester_wrote(app):
    waiting(app)
    manager = client_for(app, "manager")
    [chinese] = manager.get("/api/v1/approvals").json
    assert chinese["description"] == "入库 1,000 kg 高筋面粉 (M001)，主仓库"
    [browser_english] = manager.get("/api/v1/approvals", headers={"Accept-Language": "en-GB"}).json
    assert browser_english["description"] == "Book in 1,000 kg Bread Flour (M001) in Main Warehouse"
    db.session.execute(update(User).where(User.username == "manager").values(language="en"))
    db.session.commit()
    [chosen] = manager.get("/api/v1/approvals", headers={"Accept-Language": "zh-CN"}).json
    assert chosen["description"] == browser_english["description"]  # a choice beats the browser
    assert chosen["value_cny"] == "6200.00"  # data stays plain for scripts


def test_the_conversation_list_marks_a_waiting_booking_then_its_unseen_outcome(app):
    decided, staff = waiting(app)
    conversation = decided["conversation_id"]

    def mark():
        return {c["id"]: c["signoff"] for c in staff.get("/api/v1/conversations").json}[conversation]

    assert mark() == "waiting"
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    use(app, ScriptedProvider(lambda request: calls()))  # the model answers the outcome with nothing more
    client_for(app, "manager").post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "reject"})
    assert mark() == "rejected"  # news until the requester opens the conversation
    assert staff.get(f"/api/v1/chat/messages/{decided['message_id']}").status_code == 200
    assert mark() == "rejected"  # a script reading the answer is not the requester opening it
    assert staff.get(f"/c/{conversation}").status_code == 200
    assert mark() is None
