"""factory-boy factories for what the seed does not cover."""

from __future__ import annotations

from decimal import Decimal

import factory
from factory.alchemy import SQLAlchemyModelFactory

from inventory_ai.extensions import db
from inventory_ai.models import Category, Material, Role, User, Warehouse


class Base(SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session_factory = lambda: db.session  # noqa: E731 - bound per app context
        sqlalchemy_session_persistence = "commit"


class UserFactory(Base):
    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    role = Role.WAREHOUSE_STAFF.value
    password_hash = factory.LazyFunction(lambda: "")

    @factory.post_generation
    def password(self, create, extracted, **kwargs):
        self.set_password(extracted or "factory-password")


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


def warehouse(code: str) -> Warehouse:
    return db.session.query(Warehouse).filter_by(code=code).one()
