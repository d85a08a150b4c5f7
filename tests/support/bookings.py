"""Booking over the admin API, as an admin's script does: the path, a plain body of each kind the
tests start from, a post with an optional idempotency key, and how many movements the ledger holds."""

from __future__ import annotations

from sqlalchemy import func, select

from inventory_ai.extensions import db
from inventory_ai.models import StockMovement

PATH = "/api/v1/admin/stock/movements"
# An arrival of 5 kg of M001, named as people name the warehouse.
BODY = {
    "material": "M001",
    "warehouse": "主仓库",
    "movement_type": "inbound",
    "quantity": 5,
    "unit": "kg",
    "reason": "到货",
}
# 5 of M001 out of WH01, in the material's own unit.
OUT = {
    "material": "M001",
    "warehouse": "WH01",
    "movement_type": "outbound",
    "quantity": "5",
    "reason": "test",
}
# 5 kg of M001 out of the main warehouse, as an agent asks for it through MCP (or a direct call).
MCP_BOOKING = {
    "material": "M001",
    "warehouse": "主仓库",
    "movement_type": "outbound",
    "quantity": 5,
    "unit": "kg",
    "reason": "MCP 测试",
}


def book(client, body: dict, key: str | None = None, **kwargs):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post(PATH, json=body, headers=headers, **kwargs)


def movements() -> int:
    db.session.commit()
    return db.session.scalar(select(func.count()).select_from(StockMovement))
