"""The level cap refuses only what would raise a level beyond what a warehouse holds: lowering a level near
it is allowed, a transfer is refused only for the receiving level, and later bookings still work."""

from __future__ import annotations

import pytest

from tests.support.bookings import BODY, OUT, book


def adjust(client, quantity: str):
    return book(client, {**BODY, "movement_type": "adjustment", "quantity": quantity, "reason": "盘点"})


def test_lowering_a_level_near_the_cap_is_allowed(client, auth):
    auth.login("admin")
    assert adjust(client, "600000000").status_code == 201
    down = adjust(client, "100000000")
    assert down.status_code == 201, down.get_data(as_text=True)[:300]
    assert down.json["level_after"] == "100000000"
    assert adjust(client, "999999999").status_code == 201
    out = book(client, {**BODY, "movement_type": "outbound", "quantity": "5"})
    assert out.status_code == 201 and out.json["level_after"] == "999999994"


def test_raising_a_level_beyond_the_cap_is_refused(client, auth):
    auth.login("admin")
    assert adjust(client, "999999999").status_code == 201
    assert book(client, {**BODY, "quantity": "2"}).status_code == 422
    assert adjust(client, "1000000001").status_code == 422


def test_a_transfer_is_refused_only_when_it_raises_the_receiving_level_beyond_the_cap(client, auth):
    auth.login("admin")
    for warehouse in ("主仓库", "冷库"):
        assert (
            book(
                client,
                {**BODY, "movement_type": "adjustment", "quantity": "999999990", "warehouse": warehouse},
            ).status_code
            == 201
        )
    transfer = {**BODY, "movement_type": "transfer", "quantity": "20", "to_warehouse": "冷库"}
    assert book(client, transfer).status_code == 422  # the receiving level would pass the cap
    transfer["quantity"] = "5"
    moved = book(client, transfer)  # the sending level falls: never a reason to refuse
    assert moved.status_code == 201 and moved.json["to_level_after"] == "999999995"


@pytest.mark.parametrize("quantity", ["10000000000000", "1e13", "999999999999"])
def test_levels_beyond_what_a_warehouse_holds_are_refused_and_later_bookings_still_work(
    admin_client, quantity
):
    big = book(admin_client, dict(OUT, movement_type="inbound", quantity=quantity))
    assert big.status_code == 422
    assert book(admin_client, OUT).status_code == 201
