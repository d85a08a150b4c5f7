"""Every domain tool: success, not found, bad arguments, permission; and the permissions document."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.errors import DomainError, Forbidden, NotFound
from inventory_ai.models import ROLES, Intent, PurchaseRequest
from tests.support.tool_context import context

DOC = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"


def run(session, name, arguments, username="admin"):
    tool = manager().registry.get(name)
    assert manager().registry.argument_errors(name, arguments) == []
    return tool.execute(arguments, context(session, username))


# name: (good arguments, arguments naming something that does not exist, arguments the schema refuses)
CASES = {
    "search_materials": ({"keyword": "面粉"}, {"keyword": "面粉", "warehouse": "Moon Base"}, {"keyword": ""}),
    "get_material_detail": ({"material": "M001"}, {"material": "火箭燃料"}, {"material": 1}),
    "get_inventory_stats": ({"warehouse": "冷库"}, {"category": "Rocket Fuel"}, {"warehouse": ["WH01"]}),
    "list_low_stock": ({}, {"warehouse": "Moon Base"}, {"limit": 0}),
    "get_stock_movements": ({"material": "M001", "days": 30}, {"material": "火箭燃料"}, {"days": 999}),
    "record_stock_movement": (
        {
            "material": "M001",
            "warehouse": "主仓库",
            "movement_type": "outbound",
            "quantity": 5,
            "unit": "kg",
            "reason": "test",
        },
        {
            "material": "M001",
            "warehouse": "Moon Base",
            "movement_type": "outbound",
            "quantity": 5,
            "reason": "test",
        },
        {
            "material": "M001",
            "warehouse": "主仓库",
            "movement_type": "outbound",
            "quantity": -5,
            "reason": "test",
        },
    ),
    "create_purchase_request": (
        {"material": "M002", "quantity": 200, "unit": "kg"},
        {"material": "火箭燃料", "quantity": 1},
        {"material": "M002"},
    ),
    "format_report": (
        {"title": "低库存", "rows": [{"code": "M001", "qty": 1}]},
        None,
        {"title": "x", "rows": []},
    ),
    "create_new_intent": (
        {"name": "dough", "keywords": ["面团"], "tool_name": "search_materials"},
        None,
        {"name": "Bad Name", "keywords": [], "tool_name": "search_materials"},
    ),
}


def test_every_registered_tool_has_cases():
    assert set(CASES) == set(_builtin_names())


def _builtin_names():
    from inventory_ai.assistant.tools import builtin_tools

    return [t.name for t in builtin_tools()]


@pytest.mark.parametrize("name", list(CASES))
def test_success(session, name):
    result = run(session, name, CASES[name][0])
    assert isinstance(result, dict) and result


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[1] is not None])
def test_not_found(session, name):
    with pytest.raises(NotFound):
        run(session, name, CASES[name][1])


@pytest.mark.parametrize("name", list(CASES))
def test_bad_arguments_are_refused_by_the_schema(session, name):
    assert manager().registry.argument_errors(name, CASES[name][2])


def test_results_are_what_the_model_needs(session):
    search = run(session, "search_materials", {"keyword": "面粉", "limit": 2})
    assert search["materials"][0] == {
        "code": "M001",
        "name": "高筋面粉",
        "name_en": "Bread Flour",
        "stock": "100",
        "unit": "kg",
        "warehouse": "主仓库",
    }
    assert search["more_available"] is True and search["total"] >= 4
    detail = run(session, "get_material_detail", {"material": "高筋面粉"})
    assert (
        detail["below_reorder_point"] is True
        and detail["reorder_point"] == "200"
        and detail["unit_cost_cny"] == "6.20"
    )
    low = run(session, "list_low_stock", {"limit": 3})
    assert len(low["items"]) == 3 and low["total"] > 3 and low["more_available"]
    stats = run(session, "get_inventory_stats", {})
    assert float(stats["total_value_cny"]) > 0 and {w["warehouse"] for w in stats["by_warehouse"]} == {
        "主仓库",
        "冷库",
        "包材仓",
    }


def test_booking_and_purchase_request_write_through_the_services(session):
    booked = run(session, "record_stock_movement", CASES["record_stock_movement"][0])
    assert booked["level_after"] == "95"
    again = run(session, "record_stock_movement", CASES["record_stock_movement"][0])
    assert again.get("replayed") is True and again["level_after"] == "95"  # same call id books once
    request = run(session, "create_purchase_request", CASES["create_purchase_request"][0])
    assert session.get(PurchaseRequest, request["purchase_request_id"]).status == "pending"
    run(session, "create_new_intent", CASES["create_new_intent"][0])
    assert session.scalar(select(Intent).where(Intent.name == "dough")).keywords == ["面团"]


def test_a_purchase_request_needed_yesterday_is_refused(session):
    with pytest.raises(DomainError, match="in the past"):
        run(
            session, "create_purchase_request", {"material": "M002", "quantity": 1, "needed_by": "2020-01-01"}
        )


def test_format_report_markdown_and_csv(session):
    rows = [{"code": "M001", "name": "高筋|面粉"}, {"code": "M002", "extra": 3}]
    md = run(session, "format_report", {"title": "T", "rows": rows})["report"]
    assert md.splitlines()[2] == "| code | name | extra |" and "高筋\\|面粉" in md
    csv_text = run(session, "format_report", {"title": "T", "rows": rows, "format": "csv"})["report"]
    assert csv_text.splitlines() == ["code,name,extra", "M001,高筋|面粉,", "M002,,3"]


def test_intent_for_an_unknown_tool_is_refused(session):
    with pytest.raises(DomainError, match="unknown tool"):
        run(session, "create_new_intent", {"name": "x1", "keywords": ["a"], "tool_name": "launch_rocket"})


def test_staff_may_not_book_adjustments(session):
    tool = manager().registry.get("record_stock_movement")
    args = dict(CASES["record_stock_movement"][0], movement_type="adjustment", quantity=90)
    with pytest.raises(Forbidden, match="may not book adjustment"):  # the model sees PermissionDenied
        tool.execute(args, context(session, "staff"))


# --- the permissions document is the registry --------------------------------------------


def table_from_registry(session) -> list[str]:
    registry = manager().registry
    lines = ["| tool | " + " | ".join(ROLES) + " | asks for confirmation |", "|---|---|---|---|---|---|"]
    for name in _builtin_names():
        tool = registry.get(name)
        cells = []
        for role in ROLES:
            if registry.permits(tool, None, role):
                note = tool.permission_note(role)
                cells.append(f"yes ({note})" if note else "yes")
            else:
                cells.append("no")
        confirm = "yes" if tool.requires_confirmation({}) else "no"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {confirm} |")
    return lines


def test_permissions_document_matches_the_code(session):
    text = DOC.read_text(encoding="utf-8")
    documented = re.search(
        r"<!-- permissions-table:start -->\n(.*?)\n<!-- permissions-table:end -->", text, re.S
    ).group(1)
    assert documented.splitlines() == table_from_registry(session)


@pytest.mark.parametrize("role", ROLES)
def test_each_role_is_offered_exactly_its_tools(session, role):
    offered = set(manager().registry.toolbox_for(role, session).names)
    expected = {
        line.split(" | ")[0].strip("| ")
        for line in table_from_registry(session)[2:]
        if line.split(" | ")[1 + ROLES.index(role)].startswith("yes")
    }
    assert offered == expected
