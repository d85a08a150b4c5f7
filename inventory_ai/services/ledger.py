"""The stock ledger: the one place a stock level changes.

Every booking writes its movement row(s) and the level change in one transaction, or nothing.
Concurrency: SQLite takes the write lock up front (BEGIN IMMEDIATE); PostgreSQL locks the level
rows (SELECT ... FOR UPDATE, in a fixed order so transfers cannot deadlock). An idempotency key
makes a retried booking return the first result instead of booking twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from inventory_ai import tracing
from inventory_ai.database import write_transaction
from inventory_ai.errors import Conflict, InsufficientStock, InvalidInput
from inventory_ai.models import MovementType, StockLevel, StockMovement
from inventory_ai.models.inventory import ALL_WAREHOUSES
from inventory_ai.services import shown
from inventory_ai.services.booking_effect import effect_view, level_change, moved_value
from inventory_ai.services.bookings import BookingRequest, resolve
from inventory_ai.services.stock_totals import lock_totals
from inventory_ai.services.units import (
    MAX_LEVEL,
    fmt_quantity,
)


@dataclass(frozen=True)
class MovementWords:
    """How people say a movement type: the one table for descriptions, answers and the page."""

    zh: str  # 入库: the noun and the verb
    en: str  # inbound: as the ledger and the tables name it
    en_verb: str  # Book in: what a person approves
    en_done: str  # Booked in: what was done


MOVEMENT_WORDS: dict[str, MovementWords] = {
    MovementType.INBOUND: MovementWords("入库", "inbound", "Book in", "Booked in"),
    MovementType.OUTBOUND: MovementWords("出库", "outbound", "Book out", "Booked out"),
    MovementType.ADJUSTMENT: MovementWords("盘点调整", "stocktake adjustment", "Adjust", "Adjusted"),
    MovementType.TRANSFER: MovementWords("调拨", "transfer", "Transfer", "Transferred"),
}


@dataclass(frozen=True)
class Booking:
    movement_id: int
    material_code: str
    material_name: str
    unit: str
    movement_type: str
    warehouse: str
    quantity: Decimal  # signed change to the source warehouse, in the material's unit
    level_before: Decimal
    level_after: Decimal
    to_warehouse: str | None = None
    to_level_after: Decimal | None = None
    replayed: bool = False
    material_name_en: str = ""
    # What it did to the stock, as the ledger had it when it booked (`effect_view`).
    effect: dict | None = field(default=None, compare=False)

    def as_dict(self) -> dict:
        data = {
            "movement_id": self.movement_id,
            "material": f"{self.material_name} ({self.material_code})",
            "material_en": f"{self.material_name_en} ({self.material_code})",
            "movement_type": self.movement_type,
            "warehouse": self.warehouse,
            "quantity": fmt_quantity(abs(self.quantity)),
            "unit": self.unit,
            "level_before": fmt_quantity(self.level_before),
            "level_after": fmt_quantity(self.level_after),
        }
        if self.to_warehouse:
            data["to_warehouse"] = self.to_warehouse
            data["to_level_after"] = fmt_quantity(self.to_level_after or Decimal(0))
        if self.replayed:
            data["replayed"] = True
        if self.effect is not None:
            data["effect"] = self.effect
        return data


def client_key(user_id: int, key: str) -> str:
    """A client's Idempotency-Key as the ledger stores it: its own namespace (api:) and the
    caller's, so two callers who pick the same key never see each other's booking. The "/" after
    the user cannot occur in a client's key (api/admin/catalog.py), so no key of one caller can
    be made to read as another's, nor as a key of the chat (chat:) or the seed (seed:)."""
    return f"api:{user_id}/{key}"


def legacy_client_key(key: str) -> str:
    """The key as older bookings stored it (one namespace for every caller); such a
    booking is replayed only to the user who made it."""
    return f"api:{key}"


def book(engine: Engine, request: BookingRequest) -> Booking:
    # What a booking under this key must have asked, worked out once: as bookings store it now (the
    # first), or as older ones spelled it. The movement rows keep the first.
    asked = (request.fingerprint(), request.spelled_fingerprint()) if request.idempotency_key else ()
    try:
        return _book(engine, request, asked)
    except IntegrityError:
        # Two requests with the same key raced; the loser returns the winner's booking.
        if asked:
            replay = _replay(engine, request, asked)
            if replay is not None:
                return replay
        raise Conflict("the booking conflicts with another made at the same time; look, then retry") from None


def _earlier(session: Session, request: BookingRequest, asked: tuple[str, ...]) -> Booking | None:
    """The booking already made for this request's key (or its legacy key, if that booking is the
    same caller's), or None; InvalidInput when that booking asked something else."""
    replay = _replay_in(session, request.idempotency_key, asked)
    if replay is None and request.legacy_key:
        replay = _replay_in(session, request.legacy_key, asked, owner=request.user_id)
    return replay


def _book(engine: Engine, request: BookingRequest, asked: tuple[str, ...]) -> Booking:
    with write_transaction(engine) as session:
        if asked:
            replay = _earlier(session, request, asked)
            if replay is not None:
                return replay
        material, warehouse, target, quantity = resolve(session, request)
        places = [w.id for w in (warehouse, target) if w is not None]
        # First the totals rows the levels' triggers will update, in one order, before anything fires
        # a trigger (a level created below does): no deadlock between bookings in one category.
        lock_totals(session, [(w, material.category_id) for w in (ALL_WAREHOUSES, *places)])
        levels = _lock_levels(session, material.id, places)
        source = levels[warehouse.id]
        movement_type = request.movement_type
        delta = level_change(movement_type, quantity, source.quantity)
        if movement_type == MovementType.ADJUSTMENT and delta == 0:
            raise InvalidInput(
                f"stock of {material.name_zh} ({material.code}) in {warehouse.name_zh} is already "
                f"{fmt_quantity(quantity)} {material.unit}; nothing to adjust"
            )
        # The cap keeps levels where SQLite's arithmetic is exact: only a change that raises a level
        # beyond it is refused. Lowering a level (an outbound, a stocktake down) is always allowed.
        changes = {warehouse.id: delta, **({target.id: quantity} if target is not None else {})}
        if any(change > 0 and levels[w].quantity + change > MAX_LEVEL for w, change in changes.items()):
            raise InvalidInput(
                f"that would take the stock of {material.code} beyond {fmt_quantity(MAX_LEVEL)} {material.unit}, "
                "more than any warehouse holds; check the quantity and unit"
            )
        if source.quantity + delta < 0:
            raise InsufficientStock(
                f"insufficient stock: have {fmt_quantity(source.quantity)} {material.unit}, "
                f"asked {fmt_quantity(quantity)} {material.unit} "
                f"({material.name_zh} {material.code}, {warehouse.name_zh})",
                {
                    "have": fmt_quantity(source.quantity),
                    "asked": fmt_quantity(quantity),
                    "unit": material.unit,
                },
            )
        changes = [(warehouse, source.quantity, source.quantity + delta)]
        if target is not None:
            changes.append((target, levels[target.id].quantity, levels[target.id].quantity + quantity))
        # At execution, under the lock: what the booking does, from the levels it changes.
        value = moved_value(material, request.movement_type, quantity, delta)
        effect = effect_view(material, changes, value)
        key, request_hash = request.idempotency_key, asked[0] if asked else None
        out = _write(session, request, material, warehouse, target, source, delta, key, request_hash)
        to_level = None
        if target is not None:
            dest = levels[target.id]
            _write(
                session,
                request,
                material,
                target,
                warehouse,
                dest,
                quantity,
                key and f"{key}#in",
                request_hash,
            )
            to_level = dest.quantity
        session.flush()
        return Booking(
            movement_id=out.id,
            material_code=material.code,
            material_name=material.name_zh,
            material_name_en=material.name_en,
            unit=material.unit,
            movement_type=movement_type,
            warehouse=warehouse.name_zh,
            quantity=delta,
            level_before=out.level_before,
            level_after=out.level_after,
            to_warehouse=target.name_zh if target else None,
            to_level_after=to_level,
            effect=effect,
        )


def _lock_levels(session: Session, material_id: int, warehouse_ids: list[int]) -> dict[int, StockLevel]:
    ordered = sorted(warehouse_ids)
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        session.execute(
            pg_insert(StockLevel)
            .values([{"material_id": material_id, "warehouse_id": w, "quantity": 0} for w in ordered])
            .on_conflict_do_nothing(constraint="uq_stock_levels_material_warehouse")
        )
    stmt = (
        select(StockLevel)
        .where(StockLevel.material_id == material_id, StockLevel.warehouse_id.in_(ordered))
        .order_by(StockLevel.warehouse_id)
        .with_for_update()
    )
    levels = {lv.warehouse_id: lv for lv in session.scalars(stmt)}
    for w in ordered:
        if w not in levels:  # SQLite: we hold the write lock, so creating the row is safe
            levels[w] = StockLevel(material_id=material_id, warehouse_id=w, quantity=Decimal(0))
            session.add(levels[w])
    return levels


def _write(
    session, request, material, warehouse, counterpart, level, delta, key, request_hash
) -> StockMovement:
    movement = StockMovement(
        material_id=material.id,
        warehouse_id=warehouse.id,
        counterpart_warehouse_id=counterpart.id if counterpart else None,
        movement_type=request.movement_type,
        quantity=delta,
        level_before=level.quantity,
        level_after=level.quantity + delta,
        reason=request.reason.strip()[:500],
        user_id=request.user_id,
        idempotency_key=key,
        request_hash=request_hash,
        trace_id=tracing.trace_id(),  # the decision or request that booked it, when traces are on
    )
    level.quantity = level.quantity + delta
    session.add(movement)
    return movement


def recorded_booking(session: Session, key: str) -> Booking | None:
    """The booking made under this idempotency key, if any."""
    return _replay_in(session, key)


def _replay(engine: Engine, request: BookingRequest, asked: tuple[str, ...]) -> Booking | None:
    with Session(bind=engine) as session:
        return _earlier(session, request, asked)


def _replay_in(
    session: Session, key: str, asked: tuple[str, ...] = (), owner: int | None = None
) -> Booking | None:
    """The booking made under `key` (by `owner`, if given); InvalidInput if it asked other than
    `asked` (its fingerprints; none given: whatever it asked)."""
    movement = session.scalar(select(StockMovement).where(StockMovement.idempotency_key == key))
    if movement is None or (owner is not None and movement.user_id != owner):
        return None
    if asked and movement.request_hash is not None and movement.request_hash not in asked:
        raise InvalidInput(
            "this Idempotency-Key was used for a different booking; use a new key for a new booking",
            {"movement_id": movement.id},
        )
    dest = None
    if movement.movement_type == "transfer":
        dest = session.scalar(select(StockMovement).where(StockMovement.idempotency_key == f"{key}#in"))
    changes = [
        (row.warehouse, row.level_before, row.level_after) for row in (movement, dest) if row is not None
    ]
    value = moved_value(movement.material, movement.movement_type, abs(movement.quantity), movement.quantity)
    return Booking(
        movement_id=movement.id,
        material_code=movement.material.code,
        material_name=movement.material.name_zh,
        material_name_en=movement.material.name_en,
        unit=movement.material.unit,
        movement_type=movement.movement_type,
        warehouse=movement.warehouse.name_zh,
        quantity=movement.quantity,
        level_before=movement.level_before,
        level_after=movement.level_after,
        to_warehouse=dest.warehouse.name_zh if dest else None,
        to_level_after=dest.level_after if dest else None,
        replayed=True,
        effect=effect_view(movement.material, changes, value),
    )


def describe_booking(
    session: Session, request: BookingRequest, language: str = "zh", check_stock: bool = True
) -> str:
    """ "出库 20 kg 高筋面粉 (M001)，主仓库": the sentence a person approves, in their language. A
    booking that could not go through (more out than is on hand) is refused now, saying what is on
    hand, rather than after the person approved it. Written again for each reader (check_stock
    False): a manager reading in English sees English whatever the requester wrote."""
    material, warehouse, target, quantity = resolve(session, request)
    words = MOVEMENT_WORDS[request.movement_type]
    amount = f"{shown.number(quantity)} {material.unit}"
    if check_stock and request.movement_type in (MovementType.OUTBOUND, MovementType.TRANSFER):
        have = session.scalar(
            select(StockLevel.quantity).where(
                StockLevel.material_id == material.id, StockLevel.warehouse_id == warehouse.id
            )
        ) or Decimal(0)
        if have < quantity:
            on_hand = f"{fmt_quantity(have)} {material.unit}"
            asked = f"{fmt_quantity(quantity)} {material.unit}"
            message = (
                f"库存不足：{warehouse.name_zh}现有{material.name_zh} ({material.code}) {on_hand}，"
                f"要{words.zh} {asked}"
                if language == "zh"
                else f"not enough stock: {warehouse.name_en} has {on_hand} of {material.name_en} "
                f"({material.code}); asked {asked}"
            )
            raise InsufficientStock(
                message, {"have": fmt_quantity(have), "asked": fmt_quantity(quantity), "unit": material.unit}
            )
    if language == "en":
        where = f"from {warehouse.name_en} to {target.name_en}" if target else f"in {warehouse.name_en}"
        if request.movement_type == MovementType.ADJUSTMENT:
            return f"Adjust {material.name_en} ({material.code}) {where} to {amount} (stocktake)"
        return f"{words.en_verb} {amount} {material.name_en} ({material.code}) {where}"
    if request.movement_type == MovementType.ADJUSTMENT:
        return f"{words.zh} {material.name_zh} ({material.code})，{warehouse.name_zh}，盘点数量 {amount}"
    where = f"{warehouse.name_zh} → {target.name_zh}" if target else warehouse.name_zh
    return f"{words.zh} {amount} {material.name_zh} ({material.code})，{where}"
