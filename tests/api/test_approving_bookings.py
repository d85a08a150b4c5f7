"""Approvals the way a warehouse runs them: edit before approving, reject with a reason, and a
second person's sign-off on large bookings. Over HTTP, as the page and scripts use them."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import func, select, update

from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, Signoff, StockMovement, User, utcnow
from tests.support.clients import client_for
from tests.support.scripted import booking, books, use
from tests.support.stock import level


def ask(client, text="出库") -> dict:
    body = client.post("/api/v1/chat", json={"message": text}).json
    assert body["status"] == "awaiting_confirmation", body
    return body


# --- edit before approving, reject with a reason -----------------------------------------------


def test_an_edited_approval_books_the_edited_quantity_and_says_so(app):
    model = use(app, books(booking(20)))
    staff = client_for(app, "staff")
    body = ask(staff)
    [pending] = body["pending"]
    decided = staff.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision",
        json={"decision": "approve", "tool_call_id": pending["tool_call_id"], "arguments": {"quantity": 18}},
    ).json
    assert decided["status"] == "completed"
    assert level() == Decimal("82")
    result = json.loads(decided["rounds"][0]["results"][0]["content"])
    assert result["approved_with_changes"] == {"quantity": {"from": 20, "to": 18}}
    assert '"to":18' in model.requests[1].messages[-1].content  # the model is told too
    event = db.session.scalars(
        select(AuditEvent).where(AuditEvent.tool_name == "record_stock_movement")
    ).all()[-1]
    assert event.arguments["quantity"] == 18


@pytest.mark.parametrize(
    ("edit", "status", "says"),
    [
        ({"quantity": -1}, 422, "quantity"),
        ({"quantity": 500}, 409, "库存不足"),
        ({"warehouse": "火星仓"}, 404, "warehouse"),
        ({"movement_type": "adjustment"}, 403, "may not book adjustment"),
    ],
)
def test_an_edit_is_checked_again_and_a_bad_one_leaves_the_booking_waiting(app, edit, status, says):
    use(app, books(booking(20)))
    staff = client_for(app, "staff")
    body = ask(staff)
    response = staff.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision",
        json={"decision": "approve", "tool_call_id": body["pending"][0]["tool_call_id"], "arguments": edit},
    )
    assert response.status_code == status and says in json.dumps(response.json, ensure_ascii=False)
    assert staff.get(f"/api/v1/chat/messages/{body['message_id']}").json["status"] == "awaiting_confirmation"
    assert level() == Decimal("100")


def test_a_rejection_reason_reaches_the_model(app):
    model = use(app, books(booking(20)))
    staff = client_for(app, "staff")
    body = ask(staff)
    decided = staff.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision",
        json={"decision": "reject", "reason": "数量不对，应该是两袋"},
    ).json
    assert decided["status"] == "completed" and level() == Decimal("100")
    declined = json.loads(model.requests[1].messages[-1].content)["error"]
    assert declined == {"type": "Declined", "message": "declined by the user: 数量不对，应该是两袋"}


# --- sign-off ----------------------------------------------------------------------------------

BIG = booking(1000, "inbound")  # 1000 kg of M001 at CNY 6.20: 6,200 > 5,000


def waiting_for_signoff(app) -> tuple[dict, object]:
    staff = client_for(app, "staff")
    body = ask(staff, "收货 1000 公斤高筋面粉")
    decided = staff.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision", json={"decision": "approve"}
    ).json
    return decided, staff


def test_a_large_booking_waits_for_a_second_person_then_books_once_and_the_answer_resumes(app):
    model = use(app, books(BIG))
    decided, staff = waiting_for_signoff(app)
    assert decided["status"] == "awaiting_signoff" and "审批" in decided["reply"]
    assert level() == Decimal("100") and len(model.requests) == 1  # nothing booked, the model waits
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]

    assert staff.get("/api/v1/approvals").status_code == 403
    assert client_for(app, "purchaser").get("/api/v1/approvals").status_code == 403
    manager = client_for(app, "manager")
    [listed] = manager.get("/api/v1/approvals").json
    assert listed["tool_call_id"] == call_id and listed["requested_by"] == "staff"
    assert listed["value_cny"] == "6200.00" and listed["status"] == "waiting"

    signed = manager.post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"}).json
    assert signed["status"] == "approved" and signed["decided_by"] == "manager"
    assert signed["result"]["status"] == "success" and signed["answer_status"] == "completed"
    assert level() == Decimal("1100")
    again = client_for(app, "admin").post(
        f"/api/v1/approvals/{call_id}/decision", json={"decision": "reject"}
    )
    assert again.status_code == 409 and level() == Decimal("1100")
    # The requester sees the outcome in their conversation: the model answered with the booking.
    answer_view = staff.get(f"/api/v1/chat/messages/{decided['message_id']}").json
    assert answer_view["status"] == "completed" and "level_after" in answer_view["reply"]
    assert manager.get("/api/v1/approvals").json == []


def test_nobody_signs_off_their_own_booking(app):
    use(app, books(BIG))
    manager = client_for(app, "manager")
    body = ask(manager, "收货 1000 公斤")
    decided = manager.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision", json={"decision": "approve"}
    ).json
    assert decided["status"] == "completed" and level() == Decimal("1100")  # a manager's own: no sign-off

    db.session.execute(update(User).where(User.username == "staff").values(role="warehouse_manager"))
    db.session.commit()  # a manager who was staff when they asked still cannot sign their own off
    use(app, books(BIG))
    db.session.execute(update(User).where(User.username == "staff").values(role="warehouse_staff"))
    db.session.commit()
    decided, staff = waiting_for_signoff(app)
    db.session.execute(update(User).where(User.username == "staff").values(role="warehouse_manager"))
    db.session.commit()
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    own = client_for(app, "staff").post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"})
    assert own.status_code == 403 and "own" in own.json["error"]["message"]


def test_a_rejected_signoff_books_nothing_and_its_reason_reaches_the_model(app):
    model = use(app, books(BIG))
    decided, _ = waiting_for_signoff(app)
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    signed = (
        client_for(app, "admin")
        .post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "reject", "reason": "没有采购单"})
        .json
    )
    assert signed["status"] == "rejected" and signed["result"]["status"] == "declined"
    assert level() == Decimal("100")
    assert "没有采购单" in model.requests[-1].messages[-1].content


def test_a_conversation_waiting_for_a_signoff_takes_a_new_message_and_the_requester_may_withdraw(app):
    use(app, books(BIG))
    decided, staff = waiting_for_signoff(app)
    # The booking waits for a manager; the conversation does not (tests/api/test_signoff_holds_nothing.py).
    meanwhile = staff.post(
        "/api/v1/chat", json={"message": "还有吗", "conversation_id": decided["conversation_id"]}
    )
    assert meanwhile.status_code == 200 and meanwhile.json["conversation_id"] == decided["conversation_id"]
    withdrawn = staff.post(f"/api/v1/chat/messages/{decided['message_id']}/cancel").json
    assert withdrawn["status"] == "cancelled"
    assert db.session.scalar(select(Signoff.status)) == "withdrawn"
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    late = client_for(app, "manager").post(
        f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"}
    )
    assert late.status_code == 409 and level() == Decimal("100")


def test_an_undecided_signoff_expires_with_a_clear_outcome(app):
    use(app, books(BIG))
    decided, staff = waiting_for_signoff(app)
    db.session.execute(update(Signoff).values(expires_at=utcnow() - timedelta(minutes=1)))
    db.session.commit()
    assert client_for(app, "manager").get("/api/v1/approvals").json == []
    view = staff.get(f"/api/v1/chat/messages/{decided['message_id']}").json
    assert view["status"] == "completed" and "过期" in view["reply"]
    assert view["rounds"][0]["results"][0]["status"] == "declined" and level() == Decimal("100")


def test_a_signoff_survives_a_restart(app, app_with, database_url):
    use(app, books(BIG))
    decided, _ = waiting_for_signoff(app)
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    db.session.remove()
    restarted = app_with(url=database_url)
    with restarted.app_context():
        use(restarted, books(BIG))
        manager = client_for(restarted, "manager")
        assert [s["tool_call_id"] for s in manager.get("/api/v1/approvals").json] == [call_id]
        assert (
            manager.post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"}).status_code
            == 200
        )
        assert level() == Decimal("1100")


def test_exactly_one_signoff_decision_wins(app):
    use(app, books(BIG))
    decided, _ = waiting_for_signoff(app)
    call_id = decided["rounds"][0]["tool_calls"][0]["id"]
    tokens = {}
    for name in ("manager", "admin"):
        user = db.session.query(User).filter_by(username=name).one()
        _, tokens[name] = issue_token(user, "race", scopes=("read", "decide"))  # a person's script
    db.session.commit()
    barrier = threading.Barrier(4)
    results = []

    def decide(name: str, kind: str):
        c = app.test_client()
        barrier.wait()
        r = c.post(
            f"/api/v1/approvals/{call_id}/decision",
            json={"decision": kind},
            headers={"Authorization": f"Bearer {tokens[name]}"},
        )
        results.append((kind, r.status_code))

    plan = [("manager", "approve"), ("admin", "reject"), ("manager", "reject"), ("admin", "approve")]
    threads = [threading.Thread(target=decide, args=p) for p in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [kind for kind, code in results if code == 200]
    assert len(won) == 1 and sorted(code for _, code in results) == [200, 409, 409, 409]
    booked = db.session.scalar(
        select(func.count()).select_from(StockMovement).where(StockMovement.idempotency_key.like("chat:%"))
    )
    assert booked == (1 if won == ["approve"] else 0)
    assert level() == (Decimal("1100") if won == ["approve"] else Decimal("100"))
