"""Lock order for the rows the database's stock triggers update (migration 0017).

Every write to a stock level or a material updates a few stock_totals rows from a trigger, in the
order its statements run. Two bookings in the same category could then take those rows in opposite
orders (a transfer takes two warehouses' rows) and deadlock on PostgreSQL. So a write that will
touch them takes them first, before its levels (creating a level fires a trigger too), in one order
(warehouse, category) for everyone: totals, then levels, then the material row.
SQLite has one writer at a time and needs none of this.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from inventory_ai.models import StockLevel, StockTotal
from inventory_ai.models.inventory import ALL_WAREHOUSES


def lock_totals(session: Session, keys: Iterable[tuple[int, int]]) -> None:
    """Take the stock_totals rows (warehouse_id, category_id) a write will change, in order."""
    if session.get_bind().dialect.name != "postgresql":
        return
    ordered = sorted(set(keys))
    session.execute(
        pg_insert(StockTotal)
        .values(
            [
                {"warehouse_id": w, "category_id": c, "materials_in_stock": 0, "value": 0, "below_reorder": 0}
                for w, c in ordered
            ]
        )
        .on_conflict_do_nothing()
    )
    session.execute(
        select(StockTotal.warehouse_id)
        .where(tuple_(StockTotal.warehouse_id, StockTotal.category_id).in_(ordered))
        .order_by(StockTotal.warehouse_id, StockTotal.category_id)
        .with_for_update()
    ).all()


def lock_for_material_change(session: Session, material_id: int, category_ids: set[int]) -> None:
    """Before a material's reorder point, cost, activity or category changes: every totals row the
    change moves shares between, then its levels, in the order a booking takes them."""
    if session.get_bind().dialect.name != "postgresql":
        return
    levels = select(StockLevel.warehouse_id).where(StockLevel.material_id == material_id)
    warehouses = session.scalars(levels).all()
    lock_totals(session, [(w, c) for w in (ALL_WAREHOUSES, *warehouses) for c in category_ids])
    session.execute(levels.order_by(StockLevel.warehouse_id).with_for_update()).all()
