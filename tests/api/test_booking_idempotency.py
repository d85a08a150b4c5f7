"""Idempotent bookings over the admin API: a retry is recognised by its meaning, not its spelling; a key
used for another booking is a 422; keys belong to their caller and cannot reach the ledger's own."""

from __future__ import annotations

import hashlib
import json

import pytest
from sqlalchemy import select, update

from inventory_ai.extensions import db
from inventory_ai.models import StockMovement
from inventory_ai.services import bookings, ledger
from tests.support.bookings import BODY, OUT, book, movements
from tests.support.clients import client_for
from tests.support.factories import UserFactory

# --- the same meaning is the same request ---------------------------------------------------


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


def _second_admin(app):
    UserFactory(username="admin2", role="admin")
    return client_for(app, "admin2")


def test_keys_belong_to_their_caller(app, client, auth):
    auth.login("admin")
    other = _second_admin(app)
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
    other = _second_admin(app)
    before = movements()
    again = book(client, BODY, "PO-7")
    assert again.status_code == 201 and again.json["movement_id"] == legacy and again.json["replayed"] is True
    assert book(client, {**BODY, "quantity": 6}, "PO-7").status_code == 422
    assert movements() == before
    theirs = book(other, BODY, "PO-7")  # another admin's key PO-7 is theirs: booked, not replayed
    assert (
        theirs.status_code == 201 and theirs.json["movement_id"] != legacy and "replayed" not in theirs.json
    )


def test_a_key_reused_with_a_different_body_is_refused_and_a_retry_replays(admin_client):
    first = book(admin_client, OUT, "K1")
    assert first.status_code == 201
    again = book(admin_client, OUT, "K1")
    assert again.status_code == 201 and again.json["movement_id"] == first.json["movement_id"]
    other = book(admin_client, dict(OUT, quantity="7"), "K1")
    assert other.status_code == 422 and "different booking" in other.json["error"]["message"]


def test_a_client_key_cannot_collide_with_the_ledgers_own(admin_client):
    transfer = dict(OUT, movement_type="transfer", to_warehouse="WH02")
    assert book(admin_client, transfer, "T9").status_code == 201
    assert book(admin_client, OUT, "T9#in").status_code == 422  # '#' is the ledger's
    assert book(admin_client, OUT, "T9x").status_code == 201
