"""What a booking would do to the stock and what it is worth, for the person deciding it (the
chat's card, a sign-off) and as the ledger records it when it books: the levels before and after
per warehouse, the value in CNY, the flags. Reads only."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.models import Material, MovementType, StockLevel, Warehouse
from inventory_ai.services.bookings import BookingRequest, resolve
from inventory_ai.services.units import fmt_quantity


def level_change(movement_type: str, quantity: Decimal, have: Decimal) -> Decimal:
    """The change to the source warehouse's level `have`: in adds, out and transfer take away, a
    stocktake sets the level to the counted `quantity`."""
    if movement_type == MovementType.INBOUND:
        return quantity
    if movement_type == MovementType.ADJUSTMENT:
        return quantity - have
    return -quantity


def booking_value(session: Session, request: BookingRequest) -> Decimal:
    """What a booking moves, in CNY: quantity (the counted change for a stocktake) x unit cost."""
    material, warehouse, _target, quantity = resolve(session, request)
    if request.movement_type == MovementType.ADJUSTMENT:
        level = session.scalar(
            select(StockLevel.quantity).where(
                StockLevel.material_id == material.id, StockLevel.warehouse_id == warehouse.id
            )
        )
        quantity = abs(quantity - (level or Decimal(0)))
    return (quantity * material.unit_cost).quantize(Decimal("0.01"))


def moved_value(material: Material, movement_type: str, quantity: Decimal, delta: Decimal) -> Decimal:
    """What a booking moves in CNY, as booking_value counts it: the change for a stocktake."""
    moved = abs(delta) if movement_type == MovementType.ADJUSTMENT else quantity
    return (moved * material.unit_cost).quantize(Decimal("0.01"))


# Which warehouses' figures a person may see: None for every one (services take it from the caller).
Visible = Callable[[Warehouse], bool] | None


def booking_effect(session: Session, request: BookingRequest, visible: Visible = None) -> dict:
    """What a booking would do to the stock if it were made now, for the person deciding it: per
    warehouse it changes the level before and after, the unit, the value in CNY, and flags
    (`effect_view`). Reads only; a booking that would take a level below zero is shown so
    (`refused_negative`), the ledger refuses it when it is carried out."""
    material, warehouse, target, quantity = resolve(session, request)
    ids = [w.id for w in (warehouse, target) if w is not None]
    levels = dict(
        session.execute(
            select(StockLevel.warehouse_id, StockLevel.quantity).where(
                StockLevel.material_id == material.id, StockLevel.warehouse_id.in_(ids)
            )
        ).all()
    )
    have = levels.get(warehouse.id, Decimal(0))
    delta = level_change(request.movement_type, quantity, have)
    changes = [(warehouse, have, have + delta)]
    if target is not None:
        there = levels.get(target.id, Decimal(0))
        changes.append((target, there, there + quantity))
    return effect_view(
        material, changes, moved_value(material, request.movement_type, quantity, delta), visible
    )


def effect_view(
    material: Material,
    changes: list[tuple[Warehouse, Decimal, Decimal]],
    value: Decimal,
    visible: Visible = None,
) -> dict:
    """{material, unit, reorder_point, value_cny, warehouses: [{warehouse, name, name_en, before,
    after, below_reorder_point}], flags}: only the warehouses the viewer may see (no value when
    none); flags `below_reorder_point_after` (a level it leaves under the material's reorder
    point) and `refused_negative` (a level it would take below zero)."""
    seen = [(w, before, after) for w, before, after in changes if visible is None or visible(w)]
    reorder = material.reorder_point or Decimal(0)
    rows = [
        {
            "warehouse": w.code,
            "name": w.name_zh,
            "name_en": w.name_en,
            "before": fmt_quantity(before),
            "after": fmt_quantity(after),
            "below_reorder_point": bool(reorder > 0 and after < reorder),
        }
        for w, before, after in seen
    ]
    flags = []
    if any(row["below_reorder_point"] for row in rows):
        flags.append("below_reorder_point_after")
    if any(after < 0 for _w, _before, after in seen):
        flags.append("refused_negative")
    return {
        "material": material.code,
        "unit": material.unit,
        "reorder_point": fmt_quantity(reorder),
        "value_cny": f"{value:.2f}" if rows else None,
        "warehouses": rows,
        "flags": flags,
    }
