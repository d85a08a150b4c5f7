"""The ledger and the catalogue at their edges: every odd input is a clear 4xx, never a 500."""

from __future__ import annotations

import pytest

from inventory_ai.errors import DomainError
from inventory_ai.services.catalog import find_material
from inventory_ai.services.search import search_materials


@pytest.mark.parametrize(
    "ref", ["可可 White", "可可 white chocolate", "M0", "面粉 X", "chocolate 可", "  ", "%", "_"]
)
def test_finding_a_material_either_finds_one_or_says_why(session, ref):
    try:
        material = find_material(session, ref)
    except DomainError as exc:
        assert exc.message
    else:
        assert material.code


def test_a_search_never_counts_what_it_does_not_return(session):
    for query in ["可可 White", "可可 white", "white 可可", "面粉 bread"]:
        page = search_materials(session, query, limit=5)
        assert (page.total == 0) == (page.materials == []), query


# --- over the admin API ------------------------------------------------------------------------


def _book(client, body: dict, key: str | None = None):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post("/api/v1/admin/stock/movements", json=body, headers=headers)


OUT = {
    "material": "M001",
    "warehouse": "WH01",
    "movement_type": "outbound",
    "quantity": "5",
    "reason": "test",
}


@pytest.fixture
def admin_client(client):
    from tests.support.clients import AuthActions

    AuthActions(client).login("admin")
    return client


def test_a_key_reused_with_a_different_body_is_refused_and_a_retry_replays(admin_client):
    first = _book(admin_client, OUT, "K1")
    assert first.status_code == 201
    again = _book(admin_client, OUT, "K1")
    assert again.status_code == 201 and again.json["movement_id"] == first.json["movement_id"]
    other = _book(admin_client, dict(OUT, quantity="7"), "K1")
    assert other.status_code == 422 and "different booking" in other.json["error"]["message"]


def test_a_client_key_cannot_collide_with_the_ledgers_own(admin_client):
    transfer = dict(OUT, movement_type="transfer", to_warehouse="WH02")
    assert _book(admin_client, transfer, "T9").status_code == 201
    assert _book(admin_client, OUT, "T9#in").status_code == 422  # '#' is the ledger's
    assert _book(admin_client, OUT, "T9x").status_code == 201


@pytest.mark.parametrize("quantity", ["10000000000000", "1e13", "999999999999"])
def test_levels_beyond_what_a_warehouse_holds_are_refused_and_later_bookings_still_work(
    admin_client, quantity
):
    big = _book(admin_client, dict(OUT, movement_type="inbound", quantity=quantity))
    assert big.status_code == 422
    assert _book(admin_client, OUT).status_code == 201


@pytest.mark.parametrize(
    ("quantity", "unit"), [("0.0005", "kg"), ("0.0004", "kg"), ("0.5", "g"), ("1.0001", None)]
)
def test_more_than_three_decimals_is_refused_never_rounded(admin_client, quantity, unit):
    body = dict(OUT, quantity=quantity, **({"unit": unit} if unit else {}))
    response = _book(admin_client, body)
    assert response.status_code == 422 and "at most 3 decimals" in response.json["error"]["message"]


def test_three_decimals_and_exact_unit_conversions_are_booked(admin_client):
    assert _book(admin_client, dict(OUT, quantity="0.001")).status_code == 201
    response = _book(admin_client, dict(OUT, quantity="3", unit="斤"))
    assert response.status_code == 201 and response.json["quantity"] == "1.5"
