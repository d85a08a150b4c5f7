"""The stock ledger: the one place a stock level changes.

Every booking writes its movement row(s) and the level change in one transaction, or nothing.
Concurrency: SQLite takes the write lock up front (BEGIN IMMEDIATE); PostgreSQL locks the level
rows (SELECT ... FOR UPDATE, in a fixed order so transfers cannot deadlock). An idempotency key
makes a retried booking return the first result instead of booking twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from inventory_ai.database import write_transaction
from inventory_ai.errors import InsufficientStock, InvalidInput
from inventory_ai.models import Material, MovementType, StockLevel, StockMovement, Warehouse
from inventory_ai.services.catalog import find_material, find_warehouse
from inventory_ai.services.units import convert, fmt_quantity

MOVEMENT_LABELS = {
    "inbound": ("入库", "booked in"),
    "outbound": ("出库", "booked out"),
    "adjustment": ("盘点调整", "adjusted"),
    "transfer": ("调拨", "transferred"),
}


@dataclass(frozen=True)
class BookingRequest:
    material: str
    warehouse: str
    movement_type: str
    quantity: Decimal | str | int | float
    unit: str | None
    reason: str
    user_id: int | None = None
    to_warehouse: str | None = None
    idempotency_key: str | None = None

    @classmethod
    def of(cls, fields: dict, user_id: int | None, idempotency_key: str | None) -> BookingRequest:
        """From the fields a person or the model gives (API body, tool arguments): one mapping."""
        return cls(
            material=fields["material"],
            warehouse=fields["warehouse"],
            movement_type=fields["movement_type"],
            quantity=fields["quantity"],
            unit=fields.get("unit"),
            reason=fields["reason"],
            to_warehouse=fields.get("to_warehouse"),
            user_id=user_id,
            idempotency_key=idempotency_key,
        )


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

    def as_dict(self) -> dict:
        data = {
            "movement_id": self.movement_id,
            "material": f"{self.material_name} ({self.material_code})",
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
        return data


def parse_quantity(value) -> Decimal:
    if isinstance(value, bool):
        raise InvalidInput("quantity must be a number")
    try:
        quantity = Decimal(str(value).strip())
    except (InvalidOperation, ValueError) as exc:
        raise InvalidInput(f"quantity must be a number, got {value!r}") from exc
    if not quantity.is_finite():
        raise InvalidInput("quantity must be a finite number")
    return quantity


def validate(
    session: Session, request: BookingRequest
) -> tuple[Material, Warehouse, Warehouse | None, Decimal]:
    """Resolve and check a booking without writing: used by the ledger and by confirmation prompts."""
    try:
        movement_type = MovementType(request.movement_type)
    except ValueError as exc:
        raise InvalidInput(
            f"movement_type must be one of inbound, outbound, adjustment, transfer; got {request.movement_type!r}"
        ) from exc
    if not (request.reason or "").strip():
        raise InvalidInput("reason is required: say why the stock moves")
    material = find_material(session, request.material)
    warehouse = find_warehouse(session, request.warehouse)
    target = None
    if movement_type is MovementType.TRANSFER:
        if not request.to_warehouse:
            raise InvalidInput("a transfer needs to_warehouse")
        target = find_warehouse(session, request.to_warehouse)
        if target.id == warehouse.id:
            raise InvalidInput("a transfer needs two different warehouses")
    quantity = convert(parse_quantity(request.quantity), request.unit, material.unit)
    if movement_type is MovementType.ADJUSTMENT:
        if quantity < 0:
            raise InvalidInput("an adjustment gives the counted level, which cannot be negative")
    elif quantity <= 0:
        raise InvalidInput(f"quantity must be positive, got {fmt_quantity(quantity)}")
    return material, warehouse, target, quantity


def book(engine: Engine, request: BookingRequest) -> Booking:
    try:
        return _book(engine, request)
    except IntegrityError:
        # Two requests with the same key raced; the loser returns the winner's booking.
        if request.idempotency_key:
            replay = _replay(engine, request.idempotency_key)
            if replay is not None:
                return replay
        raise


def _book(engine: Engine, request: BookingRequest) -> Booking:
    with write_transaction(engine) as session:
        if request.idempotency_key:
            replay = _replay_in(session, request.idempotency_key)
            if replay is not None:
                return replay
        material, warehouse, target, quantity = validate(session, request)
        levels = _lock_levels(session, material.id, [w.id for w in (warehouse, target) if w is not None])
        source = levels[warehouse.id]
        movement_type = request.movement_type
        if movement_type == "inbound":
            delta = quantity
        elif movement_type == "adjustment":
            delta = quantity - source.quantity
            if delta == 0:
                raise InvalidInput(
                    f"stock of {material.name_zh} ({material.code}) in {warehouse.name_zh} is already "
                    f"{fmt_quantity(quantity)} {material.unit}; nothing to adjust"
                )
        else:
            delta = -quantity
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
        out = _write(session, request, material, warehouse, target, source, delta, request.idempotency_key)
        to_level = None
        if target is not None:
            dest = levels[target.id]
            in_key = f"{request.idempotency_key}#in" if request.idempotency_key else None
            _write(session, request, material, target, warehouse, dest, quantity, in_key)
            to_level = dest.quantity
        session.flush()
        return Booking(
            movement_id=out.id,
            material_code=material.code,
            material_name=material.name_zh,
            unit=material.unit,
            movement_type=movement_type,
            warehouse=warehouse.name_zh,
            quantity=delta,
            level_before=out.level_before,
            level_after=out.level_after,
            to_warehouse=target.name_zh if target else None,
            to_level_after=to_level,
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


def _write(session, request, material, warehouse, counterpart, level, delta, key) -> StockMovement:
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
    )
    level.quantity = level.quantity + delta
    session.add(movement)
    return movement


def _replay(engine: Engine, key: str) -> Booking | None:
    with Session(bind=engine) as session:
        return _replay_in(session, key)


def _replay_in(session: Session, key: str) -> Booking | None:
    movement = session.scalar(select(StockMovement).where(StockMovement.idempotency_key == key))
    if movement is None:
        return None
    dest = None
    if movement.movement_type == "transfer":
        dest = session.scalar(select(StockMovement).where(StockMovement.idempotency_key == f"{key}#in"))
    return Booking(
        movement_id=movement.id,
        material_code=movement.material.code,
        material_name=movement.material.name_zh,
        unit=movement.material.unit,
        movement_type=movement.movement_type,
        warehouse=movement.warehouse.name_zh,
        quantity=movement.quantity,
        level_before=movement.level_before,
        level_after=movement.level_after,
        to_warehouse=dest.warehouse.name_zh if dest else None,
        to_level_after=dest.level_after if dest else None,
        replayed=True,
    )


def describe_booking(session: Session, request: BookingRequest, language: str = "zh") -> str:
    """ "出库 20 kg 高筋面粉 (M001)，主仓库": the sentence a person approves."""
    material, warehouse, target, quantity = validate(session, request)
    zh, en = MOVEMENT_LABELS[request.movement_type]
    amount = f"{fmt_quantity(quantity)} {material.unit}"
    if language == "en":
        where = f"from {warehouse.name_en} to {target.name_en}" if target else f"in {warehouse.name_en}"
        if request.movement_type == "adjustment":
            return f"Adjust {material.name_en} ({material.code}) {where} to {amount} (stocktake)"
        verb = {"inbound": "Book in", "outbound": "Book out", "transfer": "Transfer"}[request.movement_type]
        return f"{verb} {amount} {material.name_en} ({material.code}) {where}"
    if request.movement_type == "adjustment":
        return f"{zh} {material.name_zh} ({material.code})，{warehouse.name_zh}，盘点数量 {amount}"
    where = f"{warehouse.name_zh} → {target.name_zh}" if target else warehouse.name_zh
    return f"{zh} {amount} {material.name_zh} ({material.code})，{where}"
