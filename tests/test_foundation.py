"""Foundation: schema from migrations only, seed data that is consistent and idempotent, constraints."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import flask_migrate
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import IntegrityError

from inventory_ai import create_app
from inventory_ai.config import Config, ConfigError, config_for_tests
from inventory_ai.extensions import db
from inventory_ai.logging import configure_logging
from inventory_ai.models import (
    Category,
    Intent,
    Material,
    StockLevel,
    StockMovement,
    User,
    Warehouse,
)
from tests.conftest import PASSWORD


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


def test_healthz_and_readyz(client):
    assert client.get("/healthz").json == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["database"] == "ok"


def test_readyz_is_503_when_the_database_is_unreachable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = create_app(config_for_tests(f"sqlite:///{tmp_path}/missing/dir/db.sqlite"))
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.json == {"status": "unavailable", "database": "unreachable"}


def test_production_without_a_secret_key_refuses_to_start(tmp_path, monkeypatch):
    monkeypatch.setenv("INVENTORY_AI_ENV", "production")
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    with pytest.raises(ConfigError, match="INVENTORY_AI_SECRET_KEY"):
        Config.from_env(tmp_path)


def test_development_generates_a_secret_key_once(tmp_path, monkeypatch):
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    monkeypatch.delenv("INVENTORY_AI_ENV", raising=False)
    first = Config.from_env(tmp_path).secret_key
    assert len(first) >= 32
    assert Config.from_env(tmp_path).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_environment_defaults_follow_the_contract(tmp_path, monkeypatch):
    for name in (
        "DASHSCOPE_API_KEY",
        "INVENTORY_AI_LLM_PROVIDER",
        "INVENTORY_AI_LLM_MODEL",
        "INVENTORY_AI_MAX_TOOL_ITERATIONS",
        "INVENTORY_AI_DATABASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    config = Config.from_env(tmp_path)
    assert (config.llm_provider, config.llm_model, config.max_tool_iterations) == ("offline", "qwen-plus", 5)
    assert config.database_url == f"sqlite:///{tmp_path / 'inventory_ai.db'}"
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    assert Config.from_env(tmp_path).llm_provider == "dashscope"
    monkeypatch.setenv("INVENTORY_AI_MAX_TOOL_ITERATIONS", "many")
    with pytest.raises(ConfigError, match="whole number"):
        Config.from_env(tmp_path)


def test_request_id_is_returned_and_on_every_log_line(client):
    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/api/v1/nowhere", headers={"X-Request-ID": "req-abc-123"})
    assert response.headers["X-Request-ID"] == "req-abc-123"
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert lines and all(line["request_id"] == "req-abc-123" for line in lines)
    assert any(line["event"] == "request" and line["status"] == 404 for line in lines)
    generated = client.get("/healthz").headers["X-Request-ID"]
    assert len(generated) == 32
    forged = client.get("/healthz", headers={"X-Request-ID": "<script>alert(1)</script>"}).headers[
        "X-Request-ID"
    ]
    assert "<" not in forged


def test_unknown_api_path_is_json_and_unknown_page_is_html(client):
    api = client.get("/api/v1/nowhere")
    assert api.status_code == 404 and api.json["error"]["code"] == "not_found"
    page = client.get("/nowhere")
    assert page.status_code == 404 and page.mimetype == "text/html"


def test_login_page_is_served(client):
    response = client.get("/login")
    assert response.status_code == 200
    assert "csrf_token" in response.get_data(as_text=True)


def test_an_unexpected_error_is_logged_with_where_it_happened_and_nothing_secret(app, client):
    @app.get("/boom")
    def boom():
        raise RuntimeError("upstream refused key sk-abcdefghijklmnopqrstuvwx at /etc/inventory/secret.yml")

    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/boom")
    assert response.status_code == 500 and "sk-" not in response.get_data(as_text=True)
    line = next(json.loads(x) for x in buffer.getvalue().splitlines() if "unhandled_error" in x)
    assert line["error_type"] == "RuntimeError" and "test_foundation:boom:" in line["error_at"][-1]
    assert line["error_message"] == "upstream refused key [redacted] at [path]"
    assert "Traceback" not in buffer.getvalue() and "sk-abcdefghijkl" not in buffer.getvalue()
