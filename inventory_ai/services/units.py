"""Units people type (公斤, 斤, g, 毫升, 个…) converted to a material's own unit, exactly."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from inventory_ai.errors import InvalidInput

# unit -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, Decimal]] = {
    "kg": ("mass", Decimal(1)),
    "g": ("mass", Decimal("0.001")),
    "t": ("mass", Decimal(1000)),
    "斤": ("mass", Decimal("0.5")),
    "L": ("volume", Decimal(1)),
    "mL": ("volume", Decimal("0.001")),
    "pcs": ("count", Decimal(1)),
}
_ALIASES = {
    "kg": "kg",
    "kgs": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "公斤": "kg",
    "千克": "kg",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "克": "g",
    "t": "t",
    "ton": "t",
    "tons": "t",
    "tonne": "t",
    "tonnes": "t",
    "吨": "t",
    "斤": "斤",
    "jin": "斤",
    "l": "L",
    "litre": "L",
    "litres": "L",
    "liter": "L",
    "liters": "L",
    "升": "L",
    "公升": "L",
    "ml": "mL",
    "millilitre": "mL",
    "millilitres": "mL",
    "milliliter": "mL",
    "milliliters": "mL",
    "毫升": "mL",
    "pcs": "pcs",
    "pc": "pcs",
    "piece": "pcs",
    "pieces": "pcs",
    "个": "pcs",
    "件": "pcs",
    "只": "pcs",
    "枚": "pcs",
    "张": "pcs",
    "根": "pcs",
    "片": "pcs",
    "pieces.": "pcs",
    "ea": "pcs",
    "each": "pcs",
}
QUANTUM = Decimal("0.001")
# NUMERIC(18,3) holds up to 10^15; nothing a warehouse books comes near this.
MAX_QUANTITY = Decimal(10) ** 12


def canonical_unit(unit: str) -> str:
    key = (unit or "").strip()
    canonical = _ALIASES.get(key) or _ALIASES.get(key.lower())
    if canonical is None:
        raise InvalidInput(f"unknown unit {unit!r}; use kg, g, 斤, t, L, mL or pcs")
    return canonical


def convert(quantity: Decimal, unit: str | None, to_unit: str) -> Decimal:
    """Quantity in `unit` expressed in `to_unit` (the material's unit), to 3 decimals."""
    target = canonical_unit(to_unit)
    source = canonical_unit(unit) if unit else target
    (dim_from, f_from), (dim_to, f_to) = _UNITS[source], _UNITS[target]
    if dim_from != dim_to:
        raise InvalidInput(f"cannot convert {unit} to {to_unit}: this material is counted in {to_unit}")
    if abs(quantity) > MAX_QUANTITY:
        raise InvalidInput(f"quantity {quantity} is beyond any stock this warehouse could hold")
    converted = (quantity * f_from / f_to).quantize(QUANTUM, rounding=ROUND_HALF_UP)
    if quantity != 0 and converted == 0:
        raise InvalidInput(f"{quantity} {unit} is too small to book in {to_unit}")
    return converted


def fmt_quantity(value: Decimal) -> str:
    """1.500 -> '1.5', 20.000 -> '20'."""
    text = format(Decimal(value).quantize(QUANTUM), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
