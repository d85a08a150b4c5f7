"""MCP within a person's warehouses (issue 34), driven by the official SDK's client over stdio: a
WH02-only manager's agent reads every tool and tries a booking in WH01; no result carries the main
warehouse's name, code or figures, the booking is refused (audited `denied`), and one in the cold
store waits showing the cold store only. A scope changed meanwhile applies to the next call."""

from __future__ import annotations

import json
from decimal import Decimal

import anyio
from sqlalchemy import select, update

from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, Material, StockLevel, User, Warehouse
from tests.support.mcp_clients import stdio_session

SECRET_LEVEL = Decimal("91357.123")  # M001 in WH01: no real figure looks like it
READS = {
    "search_materials": {"keyword": "M001"},
    "get_material_detail": {"material": "M001"},
    "get_inventory_stats": {},
    "list_low_stock": {"limit": 50},
    "get_stock_movements": {"days": 366, "limit": 50},
}
MAIN = ("WH01", "主仓库", "Main Warehouse", "91357.123")


def test_a_cold_store_agent_sees_and_books_the_cold_store_only(app, database_url, tmp_path):
    material = db.session.scalar(select(Material).where(Material.code == "M001"))
    main = db.session.scalar(select(Warehouse).where(Warehouse.code == "WH01"))
    db.session.execute(
        update(StockLevel)
        .where(StockLevel.material_id == material.id, StockLevel.warehouse_id == main.id)
        .values(quantity=SECRET_LEVEL)
    )
    coldmanager = db.session.scalar(select(User).where(User.username == "coldmanager"))
    _, plain = issue_token(coldmanager, "agent", scopes=("read", "chat"))
    db.session.commit()
    booking = {"material": "M001", "movement_type": "inbound", "quantity": 3, "unit": "kg", "reason": "mcp"}

    async def agent():
        async with stdio_session(database_url, plain, tmp_path / "mcp.log") as session:
            names = {t.name for t in (await session.list_tools()).tools}
            reads = {
                name: await session.call_tool(name, args) for name, args in READS.items() if name in names
            }
            outside = await session.call_tool("record_stock_movement", {**booking, "warehouse": "主仓库"})
            inside = await session.call_tool("record_stock_movement", {**booking, "warehouse": "冷库"})
            db.session.execute(update(User).where(User.id == coldmanager.id).values(warehouses=["WH01"]))
            db.session.commit()
            widened = await session.call_tool("get_material_detail", {"material": "M001"})
            return reads, outside, inside, widened

    reads, outside, inside, widened = anyio.run(agent)
    assert set(reads) == set(READS)
    for name, result in reads.items():
        content = result.content[0].text
        assert not result.is_error, (name, content)
        assert not [w for w in MAIN if w in content], (name, content[:1500])
    refused = outside.content[0].text
    assert outside.is_error and "PermissionDenied" in refused and "91357" not in refused
    waiting = json.loads(inside.content[0].text)
    assert waiting["status"] == "awaiting_approval"
    assert [w["warehouse"] for w in waiting["effect"]["warehouses"]] == ["WH02"]
    assert "91357.123" in widened.content[0].text  # the next call reads the new scope
    db.session.commit()
    denied = db.session.scalars(
        select(AuditEvent).where(AuditEvent.user_id == coldmanager.id, AuditEvent.status == "denied")
    ).all()
    assert [e.tool_name for e in denied] == ["record_stock_movement"] and "warehouse=WH01" in denied[0].detail
