"""A decision over the API is said in so many words: a body without `decision` is refused (400),
never read as an approval, for the requester's decision and for a sign-off."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.support.clients import client_for
from tests.support.scripted import booking, books, use
from tests.support.stock import level

BODIES_WITHOUT_A_DECISION = [{}, {"reason": "不要出库，数量不对"}, {"decision": None}, {"decision": ""}]


@pytest.mark.parametrize("body", BODIES_WITHOUT_A_DECISION)
def test_a_decision_body_without_a_decision_is_400_and_books_nothing(app, body):
    use(app, books(booking(5)))
    staff = client_for(app, "staff")
    asked = staff.post("/api/v1/chat", json={"message": "出库"}).json
    response = staff.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json=body)
    assert response.status_code == 400
    assert response.json["error"]["code"] == "decision_required"
    assert level() == Decimal("100")
    assert staff.get(f"/api/v1/chat/messages/{asked['message_id']}").json["status"] == "awaiting_confirmation"


@pytest.mark.parametrize("body", BODIES_WITHOUT_A_DECISION)
def test_a_sign_off_body_without_a_decision_is_400_and_books_nothing(app, body):
    use(app, books(booking(1000, "inbound")))  # 6,200 CNY: waits for a manager
    staff = client_for(app, "staff")
    asked = staff.post("/api/v1/chat", json={"message": "收货"}).json
    staff.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"})
    manager = client_for(app, "manager")
    [waiting] = manager.get("/api/v1/approvals").json
    response = manager.post(f"/api/v1/approvals/{waiting['tool_call_id']}/decision", json=body)
    assert response.status_code == 400
    assert response.json["error"]["code"] == "decision_required"
    assert level() == Decimal("100")
    assert [w["tool_call_id"] for w in manager.get("/api/v1/approvals").json] == [waiting["tool_call_id"]]
