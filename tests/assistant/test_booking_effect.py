"""Approvers see the effect: every booking waiting for a person carries what it would do to the stock
(per warehouse the level before and after, the unit, the value in CNY, flags), computed when it is
shown, on every way it is shown (the chat's `pending`, GET on the message, /chat/pending,
/api/v1/approvals, MCP); the booking's result carries it again as the ledger had it when it booked."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import StockLevel, User
from inventory_ai.services import booking_effect, bookings
from tests.support.clients import approve
from tests.support.factories import MaterialFactory, PendingBookingFactory, StockLevelFactory, warehouse
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


@pytest.fixture
def flour(app):
    """A material of the test's own: reorder point 10 kg, 1.5 CNY a kg; 40 kg in WH01, 5 in WH02."""
    material = MaterialFactory(reorder_point=Decimal("10"), unit_cost=Decimal("1.5"))
    StockLevelFactory(material=material, warehouse="WH01", quantity=Decimal("40"))
    StockLevelFactory(material=material, warehouse="WH02", quantity=Decimal("5"))
    return material


def asked(material, movement_type: str = "outbound", quantity: float = 10, **more) -> dict:
    return {"material": material.code, "warehouse": "WH01", "movement_type": movement_type,
            "quantity": quantity, "unit": "kg", "reason": "生产领料", **more}  # fmt: skip


def effect(session, arguments: dict, visible=None) -> dict:
    return booking_effect.booking_effect(session, bookings.load(arguments, None, None), visible)


def set_level(material, code: str, quantity: str) -> None:
    level = db.session.scalar(
        select(StockLevel).where(
            StockLevel.material_id == material.id, StockLevel.warehouse_id == warehouse(code).id
        )
    )
    level.quantity = Decimal(quantity)
    db.session.commit()


# --- what the ledger says a booking would do ----------------------------------------------------


def test_an_outbound_shows_the_level_before_and_after_its_unit_and_value(session, flour):
    shown = effect(session, asked(flour, quantity=12))
    assert shown["material"] == flour.code and shown["unit"] == "kg"
    assert [(w["warehouse"], w["before"], w["after"]) for w in shown["warehouses"]] == [("WH01", "40", "28")]
    assert (
        shown["warehouses"][0]["name"] == "主仓库" and shown["warehouses"][0]["name_en"] == "Main Warehouse"
    )
    assert shown["value_cny"] == "18.00"  # 12 kg x 1.5
    assert shown["reorder_point"] == "10" and shown["flags"] == []


def test_an_outbound_that_leaves_the_level_under_the_reorder_point_says_so(session, flour):
    shown = effect(session, asked(flour, quantity=35))
    assert shown["warehouses"][0]["after"] == "5" and shown["warehouses"][0]["below_reorder_point"] is True
    assert shown["flags"] == ["below_reorder_point_after"]


def test_a_booking_that_would_take_the_level_below_zero_is_shown_refused(session, flour):
    """Proposed when there was enough; shown again after the stock went down meanwhile."""
    set_level(flour, "WH01", "8")
    shown = effect(session, asked(flour, quantity=12))
    assert shown["warehouses"][0]["after"] == "-4"
    assert "refused_negative" in shown["flags"] and "below_reorder_point_after" in shown["flags"]


def test_a_transfer_shows_both_warehouses_and_a_stocktake_the_counted_change(session, flour):
    moved = effect(session, asked(flour, "transfer", 15, to_warehouse="WH02"))
    assert [(w["warehouse"], w["before"], w["after"]) for w in moved["warehouses"]] == [
        ("WH01", "40", "25"),
        ("WH02", "5", "20"),
    ]
    assert moved["value_cny"] == "22.50" and moved["flags"] == []
    counted = effect(session, asked(flour, "adjustment", 37))
    assert [(w["before"], w["after"]) for w in counted["warehouses"]] == [("40", "37")]
    assert counted["value_cny"] == "4.50"  # the 3 kg counted away, as the sign-off rule values it
    grams = effect(session, {**asked(flour, quantity=500), "unit": "g", "movement_type": "inbound"})
    assert grams["warehouses"][0]["after"] == "40.5" and grams["unit"] == "kg"


def test_an_effect_shows_only_the_warehouses_its_viewer_may_see(session, flour):
    """The hook for the warehouses a person works in (assistant/effects.visible_to)."""
    cold_store_only = effect(
        session, asked(flour, "transfer", 15, to_warehouse="WH02"), visible=lambda w: w.code == "WH02"
    )
    assert [w["warehouse"] for w in cold_store_only["warehouses"]] == ["WH02"]
    nowhere = effect(session, asked(flour, quantity=35), visible=lambda w: False)
    assert nowhere["warehouses"] == [] and nowhere["value_cny"] is None and nowhere["flags"] == []


# --- shown wherever a booking waits -------------------------------------------------------------


def test_the_chats_pending_booking_carries_its_effect_computed_when_shown(app, client, auth, flour):
    use(app, ScriptedProvider(calls(call("record_stock_movement", asked(flour, quantity=12))), answer("好")))
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "出库12公斤"}).json
    [pending] = body["pending"]
    assert [(w["before"], w["after"]) for w in pending["effect"]["warehouses"]] == [("40", "28")]

    set_level(flour, "WH01", "30")  # someone booked meanwhile: shown again, it says so
    again = client.get(f"/api/v1/chat/messages/{body['message_id']}").json["pending"][0]
    assert [(w["before"], w["after"]) for w in again["effect"]["warehouses"]] == [("30", "18")]
    waiting = client.get("/api/v1/chat/pending").json
    assert [
        w["effect"]["warehouses"][0]["after"] for w in waiting if w["tool_call_id"] == pending["tool_call_id"]
    ] == ["18"]
    listed = client.get(f"/api/v1/conversations/{body['conversation_id']}").json["messages"][-1]
    assert listed["pending"][0]["effect"]["warehouses"][0]["after"] == "18"

    decided = approve(client, body["message_id"]).json
    [result] = [r for r in decided["rounds"][0]["results"] if r["tool_call_id"] == pending["tool_call_id"]]
    booked = json.loads(result["content"])["effect"]  # again at execution, as the ledger booked it
    assert [(w["before"], w["after"]) for w in booked["warehouses"]] == [("30", "18")]
    assert booked["value_cny"] == "18.00"


def test_a_booking_waiting_for_sign_off_shows_its_effect_to_the_signer(app, client, auth, flour):
    staff = db.session.query(User).filter_by(username="staff").one()
    big = asked(flour, quantity=30)
    flour.unit_cost = Decimal("500")  # 30 kg x 500: over the 5000 CNY sign-off threshold
    db.session.commit()
    record = PendingBookingFactory(user=staff, arguments=big)
    auth.login("staff")
    approve(client, record.round.message_id)
    auth.logout()
    auth.login("manager")
    [waiting] = [s for s in client.get("/api/v1/approvals").json if s["tool_call_id"] == record.call_id]
    assert waiting["effect"]["value_cny"] == "15000.00"
    assert [(w["before"], w["after"]) for w in waiting["effect"]["warehouses"]] == [("40", "10")]
    page = client.get("/approvals")
    assert page.status_code == 200 and ('class="effect"' in page.text and "库存变化" in page.text)
    assert "15000.00" in page.text


def test_an_mcp_booking_that_waits_says_what_it_would_do(app, flour):
    staff = db.session.query(User).filter_by(username="staff").one()
    result = manager().call_directly(db.session, staff, "record_stock_movement", asked(flour, quantity=12))
    content = json.loads(result.content)
    assert content["status"] == "awaiting_approval"
    assert [(w["before"], w["after"]) for w in content["effect"]["warehouses"]] == [("40", "28")]


def test_the_card_on_the_page_shows_the_effect(app, client, auth, flour):
    use(app, ScriptedProvider(calls(call("record_stock_movement", asked(flour, quantity=35))), answer("好")))
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "出库35公斤"}).json
    drawn = client.get(f"/messages/{body['message_id']}").text
    assert 'class="effect"' in drawn and "40 kg" in drawn and "5 kg" in drawn
    assert 'data-flags="below_reorder_point_after"' in drawn
