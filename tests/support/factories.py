"""factory-boy factories for the data a test needs of its own, beside the seed (cookiecutter-flask's
tests/factories.py): users with a role (and the warehouses they work in), materials, stock levels,
conversations, and bookings waiting for their user's approval. Each commits in the app context's
session, so what it makes is there for the requests a test then sends."""

from __future__ import annotations

import json
from decimal import Decimal

import factory
from factory.alchemy import SQLAlchemyModelFactory

from inventory_ai.extensions import db
from inventory_ai.models import (
    CallStatus,
    Category,
    ChatMessage,
    Conversation,
    Material,
    MessageStatus,
    Role,
    StockLevel,
    ToolCallRecord,
    ToolRound,
    User,
    Warehouse,
    new_call_id,
    utcnow,
)
from tests.support.databases import PASSWORD


class Base(SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session_factory = lambda: db.session  # noqa: E731 - bound per app context
        sqlalchemy_session_persistence = "commit"


def warehouse(code: str) -> Warehouse:
    return db.session.query(Warehouse).filter_by(code=code).one()


def user_named(username: str) -> User:
    """A user the seed or a factory made, by name."""
    return db.session.query(User).filter_by(username=username).one()


class UserFactory(Base):
    """A user who logs in with the suite's password: `UserFactory(role="warehouse_manager")`;
    `UserFactory(warehouses=["WH02"])` works in WH02 only (None, the default: every warehouse)."""

    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    role = Role.WAREHOUSE_STAFF.value
    password = PASSWORD
    warehouses = None  # None: every warehouse

    @classmethod
    def _create(cls, model_class, *args, password=PASSWORD, warehouses=None, **kwargs):
        user = model_class(*args, **kwargs)
        user.set_password(password)
        if warehouses is not None:
            user.warehouses = list(warehouses)
        db.session.add(user)
        db.session.commit()
        return user


class MaterialFactory(Base):
    class Meta:
        model = Material

    code = factory.Sequence(lambda n: f"T{n:05d}")
    name_zh = factory.Sequence(lambda n: f"测试原料{n}")
    name_en = factory.Sequence(lambda n: f"Test Material {n}")
    name_en_key = factory.LazyAttribute(lambda m: m.name_en.lower())
    unit = "kg"
    reorder_point = Decimal("10")
    unit_cost = Decimal("1.5")
    category = factory.LazyFunction(lambda: db.session.query(Category).filter_by(code="FL").one())


class StockLevelFactory(Base):
    """`StockLevelFactory(material=m, warehouse="WH02", quantity=Decimal("40"))`: a level with no
    movement behind it (the ledger's tests book instead)."""

    class Meta:
        model = StockLevel

    material = factory.SubFactory(MaterialFactory)
    warehouse = factory.LazyFunction(lambda: warehouse("WH01"))
    quantity = Decimal("100")

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        if isinstance(kwargs.get("warehouse"), str):
            kwargs["warehouse"] = warehouse(kwargs["warehouse"])
        material, place = kwargs.pop("material"), kwargs.pop("warehouse")
        return super()._create(model_class, *args, material_id=material.id, warehouse_id=place.id, **kwargs)


class ConversationFactory(Base):
    """A conversation of its user's, with one finished question and answer."""

    class Meta:
        model = Conversation

    user = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"conversation {n}")
    question = "哪些原料库存不足？"
    answer = "都够用。"

    @classmethod
    def _create(cls, model_class, *args, question=None, answer=None, **kwargs):
        user = kwargs.pop("user")
        conversation = model_class(*args, user_id=user.id, **kwargs)
        conversation.messages = [
            ChatMessage(created_seq=1, role="user", content=question, language="zh"),
            ChatMessage(created_seq=2, role="assistant", content=answer, language="zh",
                        status=MessageStatus.COMPLETED.value),
        ]  # fmt: skip
        db.session.add(conversation)
        db.session.commit()
        return conversation


class PendingBookingFactory(Base):
    """A booking the model asked for, waiting for its user's approval in an answer of its own:
    `record = PendingBookingFactory(user=u, arguments={...})`; `record.round.message` is the
    answer to decide on (`/api/v1/chat/messages/<id>/decision`)."""

    class Meta:
        model = ToolCallRecord

    user = factory.SubFactory(UserFactory)
    arguments = factory.LazyFunction(
        lambda: {
            "material": "M001",
            "warehouse": "主仓库",
            "movement_type": "outbound",
            "quantity": 5,
            "unit": "kg",
            "reason": "生产领料",
        }  # fmt: skip
    )
    description = "出库 5 kg 高筋面粉 (M001)，主仓库"

    @classmethod
    def _create(cls, model_class, *args, user=None, arguments=None, description=None, **kwargs):
        conversation = Conversation(user_id=user.id, title=description[:200], messages=[])
        conversation.messages = [
            ChatMessage(created_seq=1, role="user", content=description, language="zh"),
            ChatMessage(created_seq=2, role="assistant", content="", language="zh",
                        status=MessageStatus.AWAITING_CONFIRMATION.value),
        ]  # fmt: skip
        db.session.add(conversation)
        db.session.flush()
        stored = ToolRound(message_id=conversation.messages[1].id, position=0, started_at=utcnow())
        record = model_class(
            position=0, name="record_stock_movement", arguments=json.dumps(arguments, ensure_ascii=False),
            description=description, status=CallStatus.PENDING_CONFIRMATION.value, **kwargs,
        )  # fmt: skip
        record.model_call_id = record.call_id = record.call_id or new_call_id()
        stored.calls.append(record)
        db.session.add(stored)
        db.session.commit()
        return record
