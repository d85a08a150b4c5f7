"""A booking waiting for its user's approval, made by a factory rather than a scripted model: what
approving and rejecting it do, and who may."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import StockLevel, StockMovement
from tests.support.clients import AuthActions, approve
from tests.support.factories import (
    ConversationFactory,
    MaterialFactory,
    PendingBookingFactory,
    StockLevelFactory,
    UserFactory,
)
from tests.support.scripted import ScriptedProvider, answer, use


def _level(material) -> Decimal:
    return db.session.scalar(select(StockLevel.quantity).where(StockLevel.material_id == material.id))


def test_an_approved_booking_is_booked_once_and_the_model_hears_of_it(app):
    user = UserFactory(role="warehouse_staff")
    material = MaterialFactory()
    StockLevelFactory(material=material, warehouse="WH01", quantity=Decimal("40"))
    record = PendingBookingFactory(user=user, arguments={
        "material": material.code, "warehouse": "WH01", "movement_type": "outbound", "quantity": 15,
        "unit": "kg", "reason": "生产领料"})  # fmt: skip
    model = use(app, ScriptedProvider(answer("已出库。")))
    client = app.test_client()
    AuthActions(client).login(user.username)
    decided = approve(client, record.round.message_id)
    assert decided.json["status"] == "completed" and decided.json["reply"] == "已出库。"
    db.session.expire_all()
    assert _level(material) == Decimal("25")
    assert db.session.scalar(
        select(StockMovement.idempotency_key).where(StockMovement.material_id == material.id)
    ) == (f"chat:{record.call_id}")
    assert model.requests[0].messages[-1].role == "tool"


def test_a_rejected_booking_books_nothing_and_someone_else_cannot_decide_it(app):
    owner, other = UserFactory(), UserFactory()
    material = MaterialFactory()
    StockLevelFactory(material=material, quantity=Decimal("40"))
    record = PendingBookingFactory(user=owner, arguments={
        "material": material.code, "warehouse": "WH01", "movement_type": "outbound", "quantity": 5,
        "reason": "领料"})  # fmt: skip
    use(app, ScriptedProvider(answer("好的，不出库。")))
    intruder = app.test_client()
    AuthActions(intruder).login(other.username)
    url = f"/api/v1/chat/messages/{record.round.message_id}/decision"
    assert intruder.post(url, json={"decision": "approve"}).status_code == 404
    client = app.test_client()
    AuthActions(client).login(owner.username)
    rejected = client.post(url, json={"decision": "reject", "reason": "数量不对"})
    assert rejected.json["status"] == "completed"
    db.session.expire_all()
    assert _level(material) == Decimal("40")


def test_a_users_conversations_are_theirs_alone(app):
    me = UserFactory()
    mine, theirs = ConversationFactory(user=me), ConversationFactory()
    client = app.test_client()
    AuthActions(client).login(me.username)
    listed = {c["id"] for c in client.get("/api/v1/conversations").json}
    assert mine.id in listed and theirs.id not in listed
    assert client.get(f"/api/v1/conversations/{theirs.id}").status_code == 404
