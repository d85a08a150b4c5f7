"""Warehouses per user (issue 34), proven for every tool: each registered tool is called, through
the same path as a model's or an MCP client's call (prepare, run, audit), by an unscoped user, a
WH02-only user and a WH01+WH03 user. No result names a warehouse outside the caller's (unless the
call asked for it and was refused), nor carries one of its quantities; totals count only the
caller's warehouses; every refusal is audited `denied` with the warehouse asked for. A tool added
to the registry without calls here fails `test_every_tool_is_in_the_matrix`."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.models import AuditEvent, Material, StockLevel, StockMovement, User, Warehouse
from inventory_ai.services.units import fmt_quantity
from tests.support.factories import UserFactory

WAREHOUSES = ("WH01", "WH02", "WH03")
# Quantities no real figure has: one stock level and one movement of M001 in each warehouse.
LEVEL = {"WH01": Decimal("91357.123"), "WH02": Decimal("82468.456"), "WH03": Decimal("73579.789")}
MOVED = {"WH01": Decimal("4321.111"), "WH02": Decimal("4322.222"), "WH03": Decimal("4323.333")}
SCOPES = {"everywhere": None, "wh02": ["WH02"], "wh01_wh03": ["WH01", "WH03"]}


def _booking(warehouse: str, **more) -> dict:
    return {"material": "M001", "warehouse": warehouse, "movement_type": "inbound", "quantity": 1,
            "unit": "kg", "reason": "matrix", **more}  # fmt: skip


# Every tool: the calls each user makes (one per warehouse where a tool takes one).
CALLS: dict[str, list[dict]] = {
    "search_materials": [
        {"keyword": "M001"},
        {"keyword": "面粉", "limit": 50},
        {"keyword": "面粉", "in_stock": True, "limit": 50},
        *({"keyword": "M001", "warehouse": w} for w in WAREHOUSES),
    ],
    "get_material_detail": [{"material": "M001"}, {"material": "M002"}],
    "get_inventory_stats": [{}, *({"warehouse": w} for w in WAREHOUSES)],
    "list_low_stock": [{"limit": 50}, *({"warehouse": w, "limit": 50} for w in WAREHOUSES)],
    "get_stock_movements": [
        {"days": 366, "limit": 50},
        {"material": "M001", "days": 366, "limit": 50},
        *({"warehouse": w, "days": 366, "limit": 50} for w in WAREHOUSES),
    ],
    "record_stock_movement": [
        *(_booking(w) for w in WAREHOUSES),
        _booking("WH02", movement_type="transfer", to_warehouse="WH01"),
        _booking("WH01", movement_type="transfer", to_warehouse="WH03"),
    ],
    "create_purchase_request": [{"material": "M001", "quantity": 10, "unit": "kg"}],
    "format_report": [{"title": "t", "rows": [{"a": 1}]}],
    "create_new_intent": [{"name": "dough", "keywords": ["面团"], "tool_name": "search_materials"}],
}


def test_every_tool_is_in_the_matrix(app):
    assert {t.name for t in manager().registry.all()} == set(CALLS)


@pytest.fixture
def marked(session):
    """M001 with a distinctive level and movement in every warehouse; the three users."""
    material = session.scalar(select(Material).where(Material.code == "M001"))
    for code in WAREHOUSES:
        warehouse = session.scalar(select(Warehouse).where(Warehouse.code == code))
        level = session.scalar(
            select(StockLevel).where(
                StockLevel.material_id == material.id, StockLevel.warehouse_id == warehouse.id
            )
        )
        if level is None:
            level = StockLevel(material_id=material.id, warehouse_id=warehouse.id)
            session.add(level)
        level.quantity = LEVEL[code]
        session.add(StockMovement(
            material_id=material.id, warehouse_id=warehouse.id, movement_type="inbound",
            quantity=MOVED[code], level_before=LEVEL[code] - MOVED[code], level_after=LEVEL[code],
            reason="matrix",
        ))  # fmt: skip
    for name, codes in SCOPES.items():
        UserFactory(username=f"m_{name}", role="admin", warehouses=codes, password="long-enough-1")
    session.commit()
    names = {w.code: (w.code, w.name_zh, w.name_en) for w in session.scalars(select(Warehouse))}
    return names


def _outside(scope: list[str] | None) -> list[str]:
    return [w for w in WAREHOUSES if scope is not None and w not in scope]


def _asked(arguments: dict) -> list[str]:
    """The warehouses a call names, in the order they are checked (a transfer's source first)."""
    return [arguments[k] for k in ("warehouse", "to_warehouse") if arguments.get(k)]


@pytest.mark.parametrize("scope_name", list(SCOPES))
@pytest.mark.parametrize("tool_name", list(CALLS))
def test_no_result_carries_another_warehouse(session, marked, tool_name, scope_name):
    scope = SCOPES[scope_name]
    user = session.scalar(select(User).where(User.username == f"m_{scope_name}"))
    for arguments in CALLS[tool_name]:
        result = manager().call_directly(session, user, tool_name, arguments, source="test")
        session.commit()
        asked_outside = [w for w in _asked(arguments) if w in _outside(scope)]
        content = result.content
        if asked_outside:
            error = json.loads(content)["error"]
            assert error["type"] == "PermissionDenied", (arguments, content)
            assert "you work in" in error["message"]
            denied = session.scalar(
                select(AuditEvent)
                .where(
                    AuditEvent.user_id == user.id,
                    AuditEvent.status == "denied",
                    AuditEvent.tool_name == tool_name,
                )
                .order_by(AuditEvent.id.desc())
            )
            assert denied is not None and f"warehouse={asked_outside[0]}" in denied.detail
        for code in _outside(scope):
            words = [fmt_quantity(LEVEL[code]), fmt_quantity(MOVED[code])]
            if code not in asked_outside:
                words += list(marked[code])
            leaked = [w for w in words if w in content]
            assert not leaked, (tool_name, arguments, scope, leaked, content[:2000])
        if tool_name == "get_inventory_stats" and not arguments and scope is not None:
            _totals_count_only(session, user, json.loads(content), scope, marked)


def _totals_count_only(session, user, figures: dict, scope: list[str], marked) -> None:
    """The scoped total is the sum of the scoped warehouses' values, as an unscoped reader sees them."""
    everyone = session.scalar(select(User).where(User.username == "m_everywhere"))
    full = json.loads(
        manager().call_directly(session, everyone, "get_inventory_stats", {}, source="test").content
    )
    mine = {marked[c][1] for c in scope}
    expected = sum(
        (Decimal(r["value_cny"]) for r in full["by_warehouse"] if r["warehouse"] in mine), Decimal(0)
    )
    assert Decimal(figures["total_value_cny"]) == expected
    assert {r["warehouse"] for r in figures["by_warehouse"]} <= mine
    assert Decimal(figures["total_value_cny"]) < Decimal(full["total_value_cny"])
