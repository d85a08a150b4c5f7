"""A stock booking as people and the model ask for it, defined once: its fields and rules
(`BookingSchema`, marshmallow), loaded once into the typed value the ledger takes
(`BookingRequest`), and who may ask for which movement (`MOVEMENTS_BY_ROLE`, `may_book`). The admin API takes this schema as its body; the booking tool's JSON Schema,
what the model sees, is generated from it (assistant/tools/schemas.py)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from decimal import Decimal

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema
from sqlalchemy.orm import Session

from inventory_ai.errors import Forbidden, InvalidInput
from inventory_ai.models import MOVEMENT_TYPES, Material, MovementType, Role, Warehouse
from inventory_ai.services.catalog import find_material
from inventory_ai.services.sites import find_warehouse
from inventory_ai.services.units import (
    DECIMAL_TEXT,
    MAX_QUANTITY,
    MAX_QUANTITY_CHARS,
    canonical_quantity,
    canonical_unit,
    checked_decimal,
    convert,
    fmt_quantity,
    parse_quantity,
)

# Who may book what: staff book goods in and out; adjustments and transfers are a manager's call.
MOVEMENTS_BY_ROLE: dict[str, frozenset[str]] = {
    Role.WAREHOUSE_STAFF: frozenset({MovementType.INBOUND, MovementType.OUTBOUND}),
    Role.WAREHOUSE_MANAGER: frozenset(MOVEMENT_TYPES),
    Role.ADMIN: frozenset(MOVEMENT_TYPES),
}


def may_book(role: str, movement_type: str) -> None:
    """Raise Forbidden unless this role may book this movement type."""
    allowed = MOVEMENTS_BY_ROLE.get(role, frozenset())
    if movement_type not in allowed:
        raise Forbidden(
            f"role {role} may not book {movement_type}; allowed: {', '.join(sorted(allowed)) or 'none'}"
        )


class DecimalIn(fields.Field):
    """A decimal in: a JSON number or a decimal string of ASCII digits ("12.5"), kept exact as a
    Decimal; refused 422, naming the field, where Python's Decimal() would guess ("5_0" is 50, "٥"
    is 5), for NaN, Infinity and numbers of more than 40 characters. Other than a booking's quantity
    (reorder points, unit costs) it is checked by `units.checked_decimal` (range and decimals, as
    the column holds it) before any database sees it."""

    def __init__(self, places: int, maximum: Decimal = MAX_QUANTITY, **kwargs):
        self.places, self.maximum = places, maximum
        metadata = {
            "type": "string",
            "format": "decimal",
            "pattern": f"^{DECIMAL_TEXT.pattern}$",
            "maxLength": MAX_QUANTITY_CHARS,
            **kwargs.pop("metadata", {}),
        }
        super().__init__(metadata=metadata, **kwargs)

    def read(self, value, name: str) -> Decimal:
        return checked_decimal(value, name, self.places, self.maximum)

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return self.read(value, attr or self.name or "value")
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else str(value)


class Quantity(DecimalIn):
    """A booking's quantity, in the unit it names (converted to the material's unit, and its places
    checked, by the ledger)."""

    # A quantity is never negative; zero only for a stocktake (BookingSchema says so).
    minimum = Decimal(0)

    def __init__(self, **kwargs):
        super().__init__(places=3, **kwargs)

    def read(self, value, name: str) -> Decimal:
        quantity = parse_quantity(value)
        if quantity < self.minimum:
            raise InvalidInput(f"quantity must be positive, got {quantity}")  # as written: no rounding
        return quantity


class BookingSchema(Schema):
    """The fields of a booking and their rules, for every way in (the API, the tool, the seed)."""

    material = fields.String(required=True, validate=validate.Length(min=1, max=200))
    warehouse = fields.String(required=True, validate=validate.Length(min=1, max=100))
    movement_type = fields.String(required=True, validate=validate.OneOf(MOVEMENT_TYPES))
    quantity = Quantity(required=True)
    unit = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=16),
        metadata={"description": "kg, g, 斤, L, mL, pcs"},
    )
    # Free text the model writes: its length limit is shown to the model (the others only guard
    # the database: a name too long is no name in the catalogue).
    reason = fields.String(
        required=True, validate=validate.Length(min=1, max=500), metadata={"free_text": True}
    )
    to_warehouse = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=100))

    @validates_schema(skip_on_field_errors=False)  # every problem at once
    def _rules(self, data: dict, **kwargs) -> None:
        errors: dict[str, list[str]] = {}
        if "reason" in data and not data["reason"].strip():
            errors["reason"] = ["reason is required: say why the stock moves"]
        quantity, movement_type = data.get("quantity"), data.get("movement_type")
        if quantity == 0 and movement_type in MOVEMENT_TYPES and movement_type != MovementType.ADJUSTMENT:
            # Only a stocktake may count zero (the counted level); a movement of nothing is a mistake.
            errors["quantity"] = [f"quantity must be positive, got {fmt_quantity(quantity)}"]
        if movement_type == MovementType.TRANSFER and not data.get("to_warehouse"):
            errors["to_warehouse"] = ["a transfer needs to_warehouse"]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _booking(self, data: dict, **kwargs) -> BookingRequest:
        return BookingRequest(**data)


@dataclass(frozen=True)
class BookingRequest:
    """A booking as asked, its fields checked (BookingSchema): what describe, value and book take.
    Names are looked up and units converted by the ledger, which knows the catalogue."""

    material: str
    warehouse: str
    movement_type: str
    quantity: Decimal
    unit: str | None
    reason: str
    user_id: int | None = None
    to_warehouse: str | None = None
    idempotency_key: str | None = None
    # Where a booking made before keys were per caller would be (legacy_client_key), if anywhere.
    legacy_key: str | None = None

    def fingerprint(self) -> str:
        """What was asked, by its meaning: a retry under the same idempotency key must ask the
        same, or it is refused (the IETF Idempotency-Key draft's 422). The same meaning written
        differently is the same request: 5, 5.0 and "5"; "kg" and "公斤"; the order of the fields;
        the spaces around a name or reason (the ledger keeps it stripped)."""
        quantity = canonical_quantity(self.quantity)
        try:
            unit = canonical_unit(self.unit) if self.unit else None
        except InvalidInput:
            unit = self.unit
        fields = ["v2", _stripped(self.material), _stripped(self.warehouse), self.movement_type, quantity,
                  unit, _stripped(self.reason), _stripped(self.to_warehouse) or None]  # fmt: skip
        return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()

    def spelled_fingerprint(self) -> str:
        """The fingerprint as older bookings stored it (the text as written, not its meaning): their
        retries are still recognised, without rewriting old rows."""
        fields = [self.material, self.warehouse, self.movement_type, str(self.quantity), self.unit,
                  self.reason, self.to_warehouse]  # fmt: skip
        return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()


def _stripped(text):
    return text.strip() if isinstance(text, str) else text


_SCHEMA = BookingSchema()


def load(fields: dict, user_id: int | None, idempotency_key: str | None) -> BookingRequest:
    """The booking these fields ask for, checked once (InvalidInput lists every problem by field):
    from tool arguments, a seed row or a test. The API's body comes through the same schema."""
    try:
        request = _SCHEMA.load(fields)
    except ValidationError as exc:
        problems = [f"{field}: {message}" for field, messages in sorted(exc.messages.items())
                    for message in (messages if isinstance(messages, list) else [messages])]  # fmt: skip
        raise InvalidInput("; ".join(problems), {"errors": exc.messages}) from None
    return for_caller(request, user_id, idempotency_key)


def for_caller(request: BookingRequest, user_id: int | None, idempotency_key: str | None) -> BookingRequest:
    """The booking as one caller makes it: who, and the key it is booked once under."""
    return replace(request, user_id=user_id, idempotency_key=idempotency_key)


def resolve(
    session: Session, request: BookingRequest
) -> tuple[Material, Warehouse, Warehouse | None, Decimal]:
    """Resolve a booking (its fields checked by bookings.BookingSchema) against the catalogue
    without writing: its material, its warehouses and its quantity in the material's unit. What
    the ledger books, the description a person approves and the effect they see all start here."""
    material = find_material(session, request.material)
    warehouse = find_warehouse(session, request.warehouse)
    target = None
    if request.movement_type == MovementType.TRANSFER:
        target = find_warehouse(session, request.to_warehouse)
        if target.id == warehouse.id:
            raise InvalidInput("a transfer needs two different warehouses")
    quantity = convert(request.quantity, request.unit, material.unit)
    if quantity == 0 and request.movement_type != MovementType.ADJUSTMENT:
        # Less than the ledger keeps (0.4 g of a material counted in kg).
        raise InvalidInput(
            f"{fmt_quantity(request.quantity)} {request.unit} is less than 0.001 {material.unit}"
        )
    return material, warehouse, target, quantity
