"""What a booking means: an idempotent retry is recognised by its meaning, not its spelling; a
quantity is a decimal in ASCII digits, never a guess; keys belong to their caller; the level cap
refuses only what would raise a level beyond it."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal

import pytest
from sqlalchemy import func, select, update

from inventory_ai.errors import InvalidInput
from inventory_ai.extensions import db
from inventory_ai.models import StockMovement
from inventory_ai.services import bookings, ledger
from inventory_ai.services.units import parse_quantity

PATH = "/api/v1/admin/stock/movements"
BODY = {
    "material": "M001",
    "warehouse": "主仓库",
    "movement_type": "inbound",
    "quantity": 5,
    "unit": "kg",
    "reason": "到货",
}


def movements() -> int:
    db.session.commit()
    return db.session.scalar(select(func.count()).select_from(StockMovement))


def book(client, body: dict, key: str | None = None, **kwargs):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post(PATH, json=body, headers=headers, **kwargs)


# --- 21. the same meaning is the same request ---------------------------------------------------


@pytest.mark.parametrize(
    "retry",
    [
        {"quantity": 5.0},
        {"quantity": "5"},
        {"quantity": "5.000"},
        {"quantity": " 5 "},
        {"unit": "公斤"},
        {"reason": " 到货 "},
        dict(reversed(list(BODY.items()))),
    ],
    ids=["5.0", "string", "5.000", "spaces", "unit alias", "reason spaces", "field order"],
)
def test_a_retry_that_means_the_same_replays_the_first_booking(client, auth, retry):
    auth.login("admin")
    first = book(client, BODY, "delivery-1")
    assert first.status_code == 201
    before = movements()
    again = book(client, {**BODY, **retry}, "delivery-1")
    assert again.status_code == 201, again.get_data(as_text=True)[:300]
    assert again.json["movement_id"] == first.json["movement_id"] and again.json["replayed"] is True
    assert movements() == before


def test_a_retry_that_means_something_else_is_a_422(client, auth):
    auth.login("admin")
    assert book(client, BODY, "delivery-1").status_code == 201
    for change in ({"quantity": 6}, {"quantity": "5.001"}, {"unit": "g"}, {"reason": "退货"}):
        assert book(client, {**BODY, **change}, "delivery-1").status_code == 422, change


@pytest.mark.parametrize("quantity", ["5_0", "٥", "５", "1_000", "0x10", "5e", ".", "1,5"])
def test_a_quantity_not_written_in_ascii_decimal_digits_is_refused(client, auth, quantity):
    auth.login("admin")
    before = movements()
    response = book(client, {**BODY, "quantity": quantity})
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert "digits 0-9" in str(response.json["error"]), response.json
    assert movements() == before
    with pytest.raises(InvalidInput, match="digits 0-9"):  # the assistant's path: the same rule
        parse_quantity(quantity)


@pytest.mark.parametrize(
    ("quantity", "value"), [(5, "5"), (5.5, "5.5"), ("12.125", "12.125"), ("1E+3", "1E+3")]
)
def test_ordinary_quantities_are_read_exactly(quantity, value):
    assert parse_quantity(quantity) == Decimal(value)


def _second_admin(app, client):
    created = client.post(
        "/api/v1/admin/users", json={"username": "admin2", "password": "admin2-password", "role": "admin"}
    )
    assert created.status_code == 201
    other = app.test_client()
    login = other.post("/api/v1/auth/login", json={"username": "admin2", "password": "admin2-password"})
    other.environ_base["HTTP_X_CSRFTOKEN"] = login.json["csrf_token"]
    return other


def test_keys_belong_to_their_caller(app, client, auth):
    auth.login("admin")
    other = _second_admin(app, client)
    mine = book(client, BODY, "delivery-1")
    theirs = book(other, BODY, "delivery-1")
    assert mine.status_code == theirs.status_code == 201
    assert theirs.json["movement_id"] != mine.json["movement_id"] and "replayed" not in theirs.json
    # and each caller's retry still finds their own
    assert book(other, BODY, "delivery-1").json["movement_id"] == theirs.json["movement_id"]
    assert book(client, BODY, "delivery-1").json["movement_id"] == mine.json["movement_id"]


def test_a_client_key_cannot_reach_the_ledgers_own_keys(client, auth, user):
    auth.login("admin")
    for forged in ("chat:call_1", "seed:1", f"{user('admin').id}/x", "x#in"):
        response = book(client, BODY, forged)
        if response.status_code == 201:
            stored = db.session.get(StockMovement, response.json["movement_id"]).idempotency_key
            assert stored.startswith(f"api:{user('admin').id}/"), stored
        else:
            assert response.status_code == 422
    keys = db.session.scalars(
        select(StockMovement.idempotency_key).where(StockMovement.idempotency_key.like("chat:%"))
    )
    assert list(keys) == []


def _spelled_fingerprint(body: dict) -> str:
    """The fingerprint bookings stored before 2026-11-23: the fields as written."""
    fields = [body["material"], body["warehouse"], body["movement_type"], str(body["quantity"]), body.get("unit"),
              body["reason"], body.get("to_warehouse")]  # fmt: skip
    return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()


def _legacy_booking(user_id: int, key: str) -> int:
    """A booking as the API made it before keys were per caller: key api:<key>, fingerprint of the
    text as written."""
    request = bookings.load(BODY, user_id, f"api:{key}")
    booking = ledger.book(db.engine, request)
    db.session.commit()  # a fresh transaction: the ledger wrote on a connection of its own
    db.session.execute(
        update(StockMovement)
        .where(StockMovement.id == booking.movement_id)
        .values(request_hash=_spelled_fingerprint(BODY))
    )
    db.session.commit()
    return booking.movement_id


def test_a_key_used_before_keys_were_per_caller_still_replays_to_its_caller(app, client, auth, user):
    legacy = _legacy_booking(user("admin").id, "PO-7")
    auth.login("admin")
    other = _second_admin(app, client)
    before = movements()
    again = book(client, BODY, "PO-7")
    assert again.status_code == 201 and again.json["movement_id"] == legacy and again.json["replayed"] is True
    assert book(client, {**BODY, "quantity": 6}, "PO-7").status_code == 422
    assert movements() == before
    theirs = book(other, BODY, "PO-7")  # another admin's key PO-7 is theirs: booked, not replayed
    assert (
        theirs.status_code == 201 and theirs.json["movement_id"] != legacy and "replayed" not in theirs.json
    )


# --- 22. the level cap refuses only what raises a level beyond it -------------------------------


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
