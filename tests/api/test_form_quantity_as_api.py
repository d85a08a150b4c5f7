"""The no-JavaScript decision form reads an edited quantity by the API's rule: a quantity the API
refuses (422) is refused by the form too (said on the page, nothing booked), never read as a number
Python's Decimal() would guess ("٥" and "５" are 5, "1e1" is 10)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from inventory_ai.models import Material, StockLevel

REFUSED = ["٥", "５", "1e1", "5_0", "NaN", "Infinity", " ", "1" * 41]


def m001(session) -> Decimal:
    session.expire_all()
    return session.scalar(
        select(StockLevel.quantity)
        .join(Material)
        .where(Material.code == "M001", StockLevel.warehouse_id == 1)
    )


@pytest.mark.parametrize("typed", REFUSED)
def test_a_quantity_the_api_refuses_is_refused_by_the_form_and_nothing_is_booked(
    client, auth, session, typed
):
    auth.login("staff")
    before = m001(session)
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    [pending] = asked["pending"]
    api = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision",
        json={
            "decision": "approve",
            "tool_call_id": pending["tool_call_id"],
            "arguments": {"quantity": typed},
        },
    )
    assert api.status_code == 422, api.json
    card = {"tool_call_id": pending["tool_call_id"], "asked_quantity": "20", "decision": "approve"}
    form = client.post(f"/messages/{asked['message_id']}/decision", data={**card, "quantity": typed})
    assert form.status_code == 302
    assert m001(session) == before  # nothing booked
    view = client.get(f"/api/v1/chat/messages/{asked['message_id']}").json
    assert view["status"] == "awaiting_confirmation"  # still waiting for a decision it can take


def test_a_plain_decimal_typed_into_the_form_is_booked_as_typed(client, auth, session):
    auth.login("staff")
    before = m001(session)
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    card = {
        "tool_call_id": asked["pending"][0]["tool_call_id"],
        "asked_quantity": "20",
        "decision": "approve",
    }
    done = client.post(f"/messages/{asked['message_id']}/decision", data={**card, "quantity": " 17.5 "})
    assert done.status_code == 302 and m001(session) == before - Decimal("17.5")
