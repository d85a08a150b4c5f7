"""Seed data: a plausible bakery, consistent with its own ledger, loaded once however often seeded."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from inventory_ai.models import (
    Category,
    Intent,
    Material,
    StockLevel,
    StockMovement,
    User,
    Warehouse,
)
from tests.support.databases import PASSWORD


def _counts(session) -> dict[str, int]:
    return {
        model.__tablename__: session.scalar(select(func.count()).select_from(model))
        for model in (Warehouse, Category, Material, StockLevel, StockMovement, Intent, User)
    }


def test_seed_twice_changes_nothing(session, runner):
    before = _counts(session)
    result = runner.invoke(args=["seed"])
    assert result.exit_code == 0, result.output
    assert "created warehouses: 0" in result.output
    session.expire_all()
    assert _counts(session) == before


def test_seed_data_is_a_plausible_bakery(session):
    counts = _counts(session)
    assert counts["materials"] >= 150
    assert counts["categories"] >= 8
    assert counts["warehouses"] == 3
    names = set(session.scalars(select(Category.name_en)))
    assert {
        "Flours",
        "Sugars & Sweeteners",
        "Dairy",
        "Eggs",
        "Fats & Oils",
        "Leavening Agents",
        "Packaging",
    } <= names
    below = session.scalar(
        select(func.count())
        .select_from(Material)
        .where(
            Material.reorder_point
            > select(func.coalesce(func.sum(StockLevel.quantity), 0))
            .where(StockLevel.material_id == Material.id)
            .scalar_subquery()
        )
    )
    assert 5 <= below < counts["materials"] // 2
    first_date, last_date = session.execute(
        select(func.min(StockMovement.created_at), func.max(StockMovement.created_at))
    ).one()
    assert (last_date - first_date).days >= 170


def test_seed_documents_examples_have_their_levels(session):
    for code, name, quantity in (("M001", "高筋面粉", Decimal("100")), ("M002", "低筋面粉", Decimal("50"))):
        material = session.scalar(select(Material).where(Material.code == code))
        assert material.name_zh == name
        assert sum(level.quantity for level in material.levels) == quantity


def test_every_seeded_level_equals_the_sum_of_its_ledger(session):
    ledger = dict(
        ((m, w), q)
        for m, w, q in session.execute(
            select(
                StockMovement.material_id, StockMovement.warehouse_id, func.sum(StockMovement.quantity)
            ).group_by(StockMovement.material_id, StockMovement.warehouse_id)
        )
    )
    levels = session.scalars(select(StockLevel)).all()
    assert len(levels) == len(ledger) > 150
    for level in levels:
        assert (
            Decimal(ledger[(level.material_id, level.warehouse_id)]).quantize(Decimal("0.001"))
            == level.quantity
        )


def test_each_movement_row_chains_before_and_after(session):
    rows = session.execute(
        select(
            StockMovement.material_id,
            StockMovement.warehouse_id,
            StockMovement.level_before,
            StockMovement.level_after,
        ).order_by(StockMovement.material_id, StockMovement.warehouse_id, StockMovement.id)
    ).all()
    last: dict = {}
    for material_id, warehouse_id, before, after in rows:
        assert before == last.get((material_id, warehouse_id), Decimal(0))
        assert after >= 0
        last[(material_id, warehouse_id)] = after


def test_demo_users_have_roles_and_hashed_passwords(session):
    users = {u.username: u for u in session.scalars(select(User))}
    assert {u: users[u].role for u in ("staff", "manager", "purchaser", "admin")} == {
        "staff": "warehouse_staff",
        "manager": "warehouse_manager",
        "purchaser": "purchaser",
        "admin": "admin",
    }
    assert PASSWORD not in users["staff"].password_hash
    assert users["staff"].check_password(PASSWORD)
    assert "password_hash" not in repr(users["staff"]) and users["staff"].password_hash not in repr(
        users["staff"]
    )


# --- bad input is refused by the model or the database --------------------------------------
