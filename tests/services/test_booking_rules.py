"""A booking's fields and rules are defined once (services/bookings.py) and hold the same way in:
the admin API, the booking tool, and the ledger's own callers. Zero is a stocktake's word only."""

from __future__ import annotations

from decimal import Decimal

import pytest

from inventory_ai.assistant.tools.stock import RecordStockMovement
from inventory_ai.errors import InvalidInput
from inventory_ai.services import bookings
from inventory_ai.services.bookings import BookingSchema
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use

BODY = {
    "material": "M001",
    "warehouse": "WH01",
    "movement_type": "outbound",
    "quantity": "0",
    "reason": "count",
}


@pytest.mark.parametrize("movement_type", ["inbound", "outbound", "transfer"])
def test_zero_is_refused_for_every_movement_but_a_stocktake(movement_type):
    fields = {**BODY, "movement_type": movement_type, "to_warehouse": "WH02"}
    with pytest.raises(InvalidInput, match="quantity: quantity must be positive, got 0"):
        bookings.load(fields, None, None)


def test_a_stocktake_may_count_zero_and_nothing_may_be_negative():
    assert bookings.load({**BODY, "movement_type": "adjustment"}, 7, "k").quantity == Decimal(0)
    with pytest.raises(InvalidInput, match="positive, got -1"):
        bookings.load({**BODY, "movement_type": "adjustment", "quantity": -1}, None, None)


def test_every_problem_is_named_by_its_field_at_once():
    with pytest.raises(InvalidInput) as refused:
        bookings.load(
            {"material": "M001", "movement_type": "transfer", "quantity": "x", "reason": " "}, None, None
        )
    assert set(refused.value.details["errors"]) == {"warehouse", "quantity", "reason", "to_warehouse"}


def test_the_api_refuses_a_zero_outbound_by_the_same_rule(client, auth):
    auth.login("admin")
    refused = client.post("/api/v1/admin/stock/movements", json=BODY)
    assert refused.status_code == 422
    assert refused.json["error"]["details"]["json"]["quantity"] == ["quantity must be positive, got 0"]
    counted = client.post("/api/v1/admin/stock/movements", json={**BODY, "movement_type": "adjustment"})
    assert counted.status_code == 201 and counted.json["level_after"] == "0"


def test_the_tool_refuses_a_zero_outbound_before_anyone_is_asked_to_approve(app, client, auth):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(0))), answer("ok")))
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "出库0公斤"}).json
    assert body["status"] == "completed" and body["pending"] == []
    [result] = body["rounds"][0]["results"]
    assert result["status"] == "error" and "quantity must be positive, got 0" in result["content"]


def test_the_model_sees_the_schema_the_api_checks_with():
    shown = RecordStockMovement.parameters
    loadable = {name for name, field in BookingSchema().fields.items() if not field.dump_only}
    assert set(shown["properties"]) == loadable
    assert set(shown["required"]) == {
        name for name, field in BookingSchema().fields.items() if field.required
    }
    assert shown["properties"]["quantity"] == {"type": "number", "minimum": 0}
    assert shown["properties"]["movement_type"]["enum"] == ["inbound", "outbound", "adjustment", "transfer"]
