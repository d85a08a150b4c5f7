"""Bookings and sign-offs within a person's warehouses (issue 34), over the API with a scripted
model: refused when proposed, checked again when approved and when signed off (a scope can shrink
while a booking waits), a manager's queue holds only their warehouses' bookings and deciding one
outside is 404; every refusal is audited `denied` with the user, where, and the warehouse."""

from __future__ import annotations

import json
from decimal import Decimal

from sqlalchemy import func, select, update

from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, Material, StockLevel, User, Warehouse
from tests.support.clients import client_for
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use


def in_(warehouse: str, quantity: float, **more) -> dict:
    return {**booking(quantity, "inbound"), "warehouse": warehouse, **more}


def level(code: str) -> Decimal:
    db.session.commit()
    return db.session.scalar(
        select(func.coalesce(func.sum(StockLevel.quantity), 0))
        .join(Material)
        .join(Warehouse)
        .where(Material.code == "M001", Warehouse.code == code)
    )


def denials(username: str) -> list[AuditEvent]:
    db.session.commit()
    user_id = db.session.scalar(select(User.id).where(User.username == username))
    return list(
        db.session.scalars(
            select(AuditEvent).where(AuditEvent.user_id == user_id, AuditEvent.status == "denied")
        )
    )


def set_scope(username: str, codes) -> None:
    db.session.execute(update(User).where(User.username == username).values(warehouses=codes))
    db.session.commit()


def ask(app, username: str, arguments: dict):
    use(app, ScriptedProvider(calls(call("record_stock_movement", arguments)), answer("好的")))
    client = client_for(app, username)
    return client, client.post("/api/v1/chat", json={"message": "入库"}).json


def test_a_booking_outside_is_refused_when_proposed(app):
    transfer = in_("冷库", 5, movement_type="transfer", to_warehouse="WH01")  # its far end is outside
    for username, arguments in (("coldstore", in_("主仓库", 5)), ("coldmanager", transfer)):
        _, asked = ask(app, username, arguments)
        [result] = asked["rounds"][0]["results"]
        error = json.loads(result["content"])["error"]
        assert error["type"] == "PermissionDenied" and "you work in Cold Store" in error["message"]
        assert not asked["pending"]
    found = denials("coldstore") + denials("coldmanager")
    assert len(found) == 2 and all(
        "warehouse=WH01" in e.detail and e.tool_name == "record_stock_movement" for e in found
    )


def test_a_scope_that_shrinks_before_the_approval_refuses_it(app):
    before = level("WH02")
    client, asked = ask(app, "coldstore", in_("冷库", 5))
    assert asked["status"] == "awaiting_confirmation"
    set_scope("coldstore", ["WH03"])
    use(app, ScriptedProvider(lambda request: calls()))
    decided = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}
    )
    [result] = decided.json["rounds"][0]["results"]
    assert json.loads(result["content"])["error"]["type"] == "PermissionDenied"
    assert level("WH02") == before
    assert any("warehouse=WH02" in e.detail for e in denials("coldstore"))


def waiting_signoff(app, username: str, warehouse: str) -> str:
    client, asked = ask(app, username, in_(warehouse, 1000))  # 1000 kg x CNY 6.20 > 5000
    decided = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}
    )
    assert decided.json["status"] == "awaiting_signoff", decided.json
    return decided.json["rounds"][0]["tool_calls"][0]["id"]


def test_a_managers_queue_holds_their_warehouses_only_and_outside_is_404(app):
    cold = waiting_signoff(app, "coldstore", "冷库")
    main = waiting_signoff(app, "staff", "主仓库")
    coldmanager = client_for(app, "coldmanager")
    queue = coldmanager.get("/api/v1/approvals").json
    assert [s["tool_call_id"] for s in queue] == [cold]
    assert "主仓库" not in json.dumps(queue, ensure_ascii=False)
    assert {s["tool_call_id"] for s in client_for(app, "manager").get("/api/v1/approvals").json} == {
        cold,
        main,
    }
    before = level("WH01")
    refused = coldmanager.post(f"/api/v1/approvals/{main}/decision", json={"decision": "approve"})
    assert refused.status_code == 404 and "error" in refused.json
    assert level("WH01") == before
    [denied] = denials("coldmanager")
    assert denied.tool_name == "signoff" and denied.detail == "warehouse=主仓库"
    use(app, ScriptedProvider(lambda request: calls()))
    signed = coldmanager.post(f"/api/v1/approvals/{cold}/decision", json={"decision": "approve"})
    assert signed.status_code == 200 and signed.json["status"] == "approved"


def test_a_scope_that_shrinks_while_a_signoff_waits_refuses_the_booking(app):
    before = level("WH02")
    cold = waiting_signoff(app, "coldstore", "冷库")
    set_scope("coldstore", ["WH03"])
    use(app, ScriptedProvider(lambda request: calls()))
    signed = client_for(app, "manager").post(
        f"/api/v1/approvals/{cold}/decision", json={"decision": "approve"}
    )
    assert signed.status_code == 200
    assert json.loads(signed.json["result"]["content"])["error"]["type"] == "PermissionDenied"
    assert level("WH02") == before
