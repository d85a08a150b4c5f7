"""The schema: made by migrations only, matching the models, and guarding its own invariants."""

from __future__ import annotations

from decimal import Decimal

import flask_migrate
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import (
    Material,
    StockLevel,
    StockMovement,
    User,
)


def test_migrations_run_from_empty_to_head_and_match_the_models(databases, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = databases.fresh()
    try:
        app = create_app(config_for_tests(url))
        with app.app_context():
            # Start truly empty: drop what the template copy brought, then migrate up.
            flask_migrate.downgrade(revision="base")
            assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
            flask_migrate.upgrade()
            with db.engine.connect() as conn:
                context = MigrationContext.configure(
                    conn, opts={"compare_type": True, "render_as_batch": True}
                )
                diff = compare_metadata(context, db.metadata)
            assert diff == [], f"models and migrations disagree: {diff}"
            db.engine.dispose()
    finally:
        databases.drop(url)


def test_duplicate_material_code_is_refused(session):
    existing = session.scalar(select(Material).where(Material.code == "M001"))
    session.add(
        Material(
            code="M001",
            name_zh="重复",
            name_en="Duplicate",
            name_en_key="duplicate",
            unit="kg",
            category_id=existing.category_id,
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_negative_stock_level_is_refused_by_the_database(session):
    level = session.scalars(select(StockLevel)).first()
    level.quantity = Decimal("-1")
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_movement_that_breaks_the_arithmetic_is_refused(session):
    level = session.scalars(select(StockLevel)).first()
    session.add(
        StockMovement(
            material_id=level.material_id,
            warehouse_id=level.warehouse_id,
            movement_type="inbound",
            quantity=Decimal("5"),
            level_before=Decimal("10"),
            level_after=Decimal("20"),
            reason="wrong",
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_duplicate_idempotency_key_is_refused(session):
    movement = session.scalars(select(StockMovement)).first()
    session.add(
        StockMovement(
            material_id=movement.material_id,
            warehouse_id=movement.warehouse_id,
            movement_type="inbound",
            quantity=Decimal("1"),
            level_before=Decimal("0"),
            level_after=Decimal("1"),
            reason="retry",
            idempotency_key=movement.idempotency_key,
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_unknown_role_is_refused_in_python_and_in_the_database(session):
    with pytest.raises(ValueError, match="unknown role"):
        User(username="x", role="overlord")
    with pytest.raises(IntegrityError):
        session.execute(
            text(
                "INSERT INTO users (username, password_hash, role, active, created_at) VALUES ('x', 'h', 'overlord', true, CURRENT_TIMESTAMP)"
            )
        )
    session.rollback()


def test_short_password_is_refused():
    with pytest.raises(ValueError, match="at least 8"):
        User(username="x", role="admin").set_password("short")


# --- health, config, request ids -------------------------------------------------------------


def test_upgrading_an_index_built_before_singulars_lets_strawberry_find_strawberries(session):
    from inventory_ai.models import MaterialSearchTerm
    from inventory_ai.services.search import search_materials

    # The index as 0007 built it: no singular terms beside the plural words.
    session.execute(
        MaterialSearchTerm.__table__.delete().where(
            MaterialSearchTerm.term == "strawberry",
            MaterialSearchTerm.material_id
            == select(Material.id).where(Material.code == "M125").scalar_subquery(),
        )
    )
    session.commit()
    assert [m.code for m in search_materials(session, "strawberry").materials] == ["M120"]
    session.commit()  # no read left open: the migration writes on its own connection
    flask_migrate.downgrade(revision="0007")
    flask_migrate.upgrade()
    session.commit()
    assert {m.code for m in search_materials(session, "strawberry").materials} == {"M120", "M125"}
