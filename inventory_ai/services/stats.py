"""Inventory figures: totals, stock value, items below their reorder point, movement history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session, selectinload

from inventory_ai.models import Category, Material, StockLevel, StockMovement, StockTotal, Warehouse
from inventory_ai.models.inventory import ALL_WAREHOUSES
from inventory_ai.services import clock
from inventory_ai.services.sites import Sites
from inventory_ai.services.units import fmt_quantity

ZERO = Decimal(0)
SEVERAL = -1  # _kept_for: a person limited to several warehouses, no one warehouse asked for


@dataclass
class Scope:
    warehouse_id: int | None = None
    category_id: int | None = None


def _money(value) -> str:
    return str(Decimal(value or 0).quantize(Decimal("0.01")))


def _kept_for(scope: Scope, sites: Sites) -> int | None:
    """Which figures the database keeps answer this question: every warehouse's (None), one
    warehouse's (its id), or none (SEVERAL: a person limited to several warehouses, or asking about
    one outside them, is counted from the stock levels of those warehouses, exactly)."""
    if scope.warehouse_id is not None:
        return scope.warehouse_id if sites.allows(scope.warehouse_id) else SEVERAL
    if sites.everywhere:
        return None
    return next(iter(sites.ids)) if len(sites.ids) == 1 else SEVERAL


def _totals_filter(scope: Scope, everywhere: bool) -> list:
    """Which stock_totals rows a scope reads: one warehouse's, every warehouse's one by one, or the
    all-warehouses rows (a material counted once, whichever warehouses hold it)."""
    if scope.warehouse_id is not None:
        where = [StockTotal.warehouse_id == scope.warehouse_id]
    elif everywhere:
        where = [StockTotal.warehouse_id == ALL_WAREHOUSES]
    else:
        where = [StockTotal.warehouse_id != ALL_WAREHOUSES]
    if scope.category_id is not None:
        where.append(StockTotal.category_id == scope.category_id)
    return where


def inventory_stats(session: Session, scope: Scope, *, sites: Sites) -> dict:
    """Counted in `sites` only: a warehouse outside them adds nothing to any total. Read from
    stock_totals (a row per warehouse and category, kept by the database with every stock write),
    never by aggregating the stock levels, except for a person limited to several warehouses."""
    kept = _kept_for(scope, sites)
    if kept == SEVERAL:
        return _stats_counted(session, scope, sites)
    scope = Scope(kept, scope.category_id)
    count, value = func.sum(StockTotal.materials_in_stock), func.sum(StockTotal.value)

    def grouped(name_col, key_col, everywhere: bool) -> list[tuple]:
        return session.execute(
            select(name_col, count, value)
            .join_from(StockTotal, name_col.class_, name_col.class_.id == key_col)
            .where(*_totals_filter(scope, everywhere))
            .group_by(name_col)
            .having(count > 0)
            .order_by(value.desc(), name_col)
        ).all()

    by_warehouse = [
        {"warehouse": name, "materials": n, "value_cny": _money(v)}
        for name, n, v in grouped(Warehouse.name_zh, StockTotal.warehouse_id, False)
    ]
    by_category = [
        {"category": name, "materials": n, "value_cny": _money(v)}
        for name, n, v in grouped(Category.name_zh, StockTotal.category_id, True)
    ]
    total_value = sum((Decimal(r["value_cny"]) for r in by_warehouse), ZERO)
    return {
        # A material is in one category: the categories' counts add up to the distinct materials.
        "materials_in_stock": sum(r["materials"] for r in by_category),
        "total_value_cny": str(total_value.quantize(Decimal("0.01"))),
        "below_reorder_point": _below_count(session, scope),
        "by_warehouse": by_warehouse,
        "by_category": by_category,
    }


def _stats_counted(session: Session, scope: Scope, sites: Sites) -> dict:
    """inventory_stats from the stock levels of `sites` (a material in two of them counted once)."""
    level_filter = [Material.active.is_(True), sites.where(StockLevel.warehouse_id)]
    if scope.warehouse_id is not None:
        level_filter.append(StockLevel.warehouse_id == scope.warehouse_id)
    if scope.category_id is not None:
        level_filter.append(Material.category_id == scope.category_id)
    value = func.sum(StockLevel.quantity * Material.unit_cost)

    def grouped(name_col, join_model, join_on) -> list[tuple]:
        return session.execute(
            select(name_col, func.count(func.distinct(Material.id)), value)
            .select_from(StockLevel)
            .join(Material, Material.id == StockLevel.material_id)
            .join(join_model, join_on)
            .where(*level_filter, StockLevel.quantity > 0)
            .group_by(name_col)
            .order_by(value.desc(), name_col)
        ).all()

    by_warehouse = [
        {"warehouse": name, "materials": count, "value_cny": _money(v)}
        for name, count, v in grouped(Warehouse.name_zh, Warehouse, Warehouse.id == StockLevel.warehouse_id)
    ]
    by_category = [
        {"category": name, "materials": count, "value_cny": _money(v)}
        for name, count, v in grouped(Category.name_zh, Category, Category.id == Material.category_id)
    ]
    total_value = sum((Decimal(r["value_cny"]) for r in by_warehouse), ZERO)
    return {
        "materials_in_stock": session.scalar(
            select(func.count(func.distinct(Material.id)))
            .select_from(StockLevel)
            .join(Material, Material.id == StockLevel.material_id)
            .where(*level_filter, StockLevel.quantity > 0)
        ),
        "total_value_cny": str(total_value.quantize(Decimal("0.01"))),
        "below_reorder_point": _low_counted(session, scope, 0, sites)["total"],
        "by_warehouse": by_warehouse,
        "by_category": by_category,
    }


def _below_count(session: Session, scope: Scope) -> int:
    return int(
        session.scalar(
            select(func.coalesce(func.sum(StockTotal.below_reorder), 0)).where(*_totals_filter(scope, True))
        )
    )


def low_stock(session: Session, scope: Scope, limit: int = 20, *, sites: Sites) -> dict:
    """Materials whose stock (in the warehouse, or in all of `sites`) is below the reorder point, most
    urgent first (the smallest share of the reorder point left): the first `limit` read in the order
    of an index on that share (`low_ratio`, kept by the database), the total from stock_totals."""
    kept = _kept_for(scope, sites)
    if kept == SEVERAL:
        return _low_counted(session, scope, limit, sites)
    scope = Scope(kept, scope.category_id)
    total = _below_count(session, scope)
    if not limit:
        return {"total": total, "items": []}
    if scope.warehouse_id is not None:
        # Only what this warehouse stocks: a cold-store item is not "low" in the packaging store.
        stmt = (
            select(Material, StockLevel.quantity)
            .join_from(StockLevel, Material, Material.id == StockLevel.material_id)
            .where(StockLevel.warehouse_id == scope.warehouse_id, StockLevel.low_ratio.is_not(None))
            .order_by(StockLevel.low_ratio, StockLevel.material_id)
        )
    else:
        stmt = (
            select(Material, Material.on_hand)
            .where(Material.low_ratio.is_not(None))
            .order_by(Material.low_ratio, Material.code)
        )
    if scope.category_id is not None:
        stmt = stmt.where(Material.category_id == scope.category_id)
    return {"total": total, "items": [_low_item(m, q) for m, q in session.execute(stmt.limit(limit)).all()]}


def _low_counted(session: Session, scope: Scope, limit: int, sites: Sites) -> dict:
    """low_stock from the stock levels of `sites`: what they stock, summed over them."""
    on_hand = func.coalesce(func.sum(StockLevel.quantity), 0)
    stmt = select(Material, on_hand.label("on_hand")).join(
        StockLevel,
        and_(
            StockLevel.material_id == Material.id,
            sites.where(StockLevel.warehouse_id),
            *([StockLevel.warehouse_id == scope.warehouse_id] if scope.warehouse_id is not None else []),
        ),
    )
    stmt = (
        stmt.where(Material.active.is_(True), Material.reorder_point > 0)
        .group_by(Material.id)
        .having(on_hand < Material.reorder_point)
    )
    if scope.category_id is not None:
        stmt = stmt.where(Material.category_id == scope.category_id)
    rows = session.execute(stmt).all()
    rows.sort(key=lambda r: (Decimal(r.on_hand) / r[0].reorder_point, r[0].code))
    return {"total": len(rows), "items": [_low_item(m, q) for m, q in (rows[:limit] if limit else [])]}


def _low_item(m: Material, q) -> dict:
    return {
        "code": m.code,
        "name": m.name_zh,
        "name_en": m.name_en,
        "quantity": fmt_quantity(Decimal(q)),
        "reorder_point": fmt_quantity(m.reorder_point),
        "shortfall": fmt_quantity(m.reorder_point - Decimal(q)),
        "unit": m.unit,
    }


def stock_levels_of(session: Session, material_id: int, *, sites: Sites) -> list[dict]:
    rows = session.execute(
        select(Warehouse.name_zh, StockLevel.quantity)
        .join(Warehouse, Warehouse.id == StockLevel.warehouse_id)
        .where(StockLevel.material_id == material_id, sites.where(StockLevel.warehouse_id))
        .order_by(Warehouse.code)
    ).all()
    return [{"warehouse": name, "quantity": qty} for name, qty in rows]


# What a movement row shows (movement_row): loaded with the page in two queries, not two per row.
MOVEMENT_NAMES = (
    selectinload(StockMovement.material),
    selectinload(StockMovement.warehouse),
    selectinload(StockMovement.counterpart_warehouse),
)


@dataclass
class MovementFilter:
    material_id: int | None = None
    warehouse_id: int | None = None
    days: int | None = 30  # the last N plant days, today included (when no since/until)
    movement_type: str | None = None
    since: date | None = None  # plant days, both ends included
    until: date | None = None


def movements(
    session: Session, flt: MovementFilter, limit: int = 20, offset: int = 0, *, sites: Sites
) -> dict:
    conditions = [sites.where(StockMovement.warehouse_id)]
    if flt.material_id is not None:
        conditions.append(StockMovement.material_id == flt.material_id)
    if flt.warehouse_id is not None:
        conditions.append(StockMovement.warehouse_id == flt.warehouse_id)
    if flt.movement_type:
        conditions.append(StockMovement.movement_type == flt.movement_type)
    if flt.since is not None or flt.until is not None:
        if flt.since is not None:
            conditions.append(StockMovement.created_at >= clock.day_start_utc(flt.since))
        if flt.until is not None:
            conditions.append(StockMovement.created_at < clock.day_end_utc(flt.until))
    elif flt.days:
        first = clock.today() - timedelta(days=flt.days - 1)
        conditions.append(StockMovement.created_at >= clock.day_start_utc(first))
    totals = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((StockMovement.quantity > 0, StockMovement.quantity), else_=0)), 0),
            func.coalesce(func.sum(case((StockMovement.quantity < 0, -StockMovement.quantity), else_=0)), 0),
        ).where(*conditions)
    ).one()
    rows = session.scalars(
        select(StockMovement)
        .where(*conditions)
        .order_by(StockMovement.created_at.desc(), StockMovement.id.desc())
        .limit(limit)
        .offset(offset)
        .options(*MOVEMENT_NAMES)
    ).all()
    return {
        "total": totals[0],
        "quantity_in": Decimal(totals[1]),
        "quantity_out": Decimal(totals[2]),
        "rows": rows,
    }


def stock_history(
    session: Session, material_id: int, start: datetime, end: datetime, *, sites: Sites
) -> list[tuple[datetime, Decimal]]:
    """A material's stock in all warehouses over [start, end], from the ledger: the level at start,
    then one point per movement (each row's level_after is its warehouse's level from then on).
    Read up to `end` only, so an answer's chart shows what was true when it was written."""
    rows = session.execute(
        select(StockMovement.created_at, StockMovement.warehouse_id, StockMovement.level_after)
        .where(
            StockMovement.material_id == material_id,
            StockMovement.created_at <= end,
            sites.where(StockMovement.warehouse_id),
        )
        .order_by(StockMovement.created_at, StockMovement.id)
    ).all()
    levels: dict[int, Decimal] = {}
    points: list[tuple[datetime, Decimal]] = []
    for created_at, warehouse_id, level_after in rows:
        if created_at >= start and not points:
            points.append((start, sum(levels.values(), ZERO)))
        levels[warehouse_id] = Decimal(level_after)
        if created_at >= start:
            points.append((created_at, sum(levels.values(), ZERO)))
    if not points:
        points.append((start, sum(levels.values(), ZERO)))
    points.append((end, sum(levels.values(), ZERO)))
    return points


def movement_row(mv: StockMovement) -> dict:
    """A ledger row in the words both a tool result and the pages use (names in both languages)."""
    return {
        "code": mv.material.code,
        "name": mv.material.name_zh,
        "name_en": mv.material.name_en,
        "type": mv.movement_type,
        "quantity": fmt_quantity(mv.quantity),
        "unit": mv.material.unit,
        "warehouse": mv.warehouse.name_zh,
        "warehouse_en": mv.warehouse.name_en,
    }


def stock_by_material(
    session: Session, material_ids: list[int], *, sites: Sites
) -> dict[int, list[tuple[str, Decimal]]]:
    """material id -> [(warehouse name, quantity)] in `sites`, by warehouse code (search results)."""
    rows = session.execute(
        select(StockLevel.material_id, Warehouse.name_zh, StockLevel.quantity)
        .join(Warehouse, Warehouse.id == StockLevel.warehouse_id)
        .where(StockLevel.material_id.in_(material_ids), sites.where(StockLevel.warehouse_id))
        .order_by(Warehouse.code)
    ).all()
    out: dict[int, list[tuple[str, Decimal]]] = {}
    for material_id, warehouse, quantity in rows:
        out.setdefault(material_id, []).append((warehouse, quantity))
    return out


def recent_movements(
    session: Session, material_id: int, *, sites: Sites, limit: int = 5
) -> list[StockMovement]:
    """A material's latest ledger rows in `sites`, newest first (a material's details)."""
    return list(
        session.scalars(
            select(StockMovement)
            .where(StockMovement.material_id == material_id, sites.where(StockMovement.warehouse_id))
            .order_by(StockMovement.created_at.desc(), StockMovement.id.desc())
            .limit(limit)
        )
    )
