"""Units people type (公斤, 斤, g, 毫升, 个…) converted to a material's own unit, exactly."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from inventory_ai.errors import InvalidInput, quoted

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
QUANTUM = Decimal("0.001")  # quantities have at most 3 decimals in the material's unit
# Far beyond any warehouse, and small enough that SQLite (which keeps NUMERIC as a double) holds
# every level to its third decimal, as the ledger's arithmetic CHECK needs.
MAX_QUANTITY = Decimal(10) ** 9
MAX_LEVEL = Decimal(10) ** 9


# A quantity as people and scripts write it: ASCII digits, an optional point and sign, optionally
# an exponent ("1.5", "-0", "1E+3"). Python's Decimal() takes more ("5_0" is 50, "٥" is 5):
# those are refused, not guessed at.
DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MAX_QUANTITY_CHARS = 40  # as strict_json.MAX_NUMBER_CHARS: no number of thousands of digits


# What a person types in a form's number box: digits and one decimal point, as a JSON body's
# number would be read (no exponent: "1e1" typed into a box is a slip, not 10).
PLAIN_DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_quantity(value, typed: bool = False) -> Decimal:
    """A quantity from a JSON number or a decimal string (exact), or InvalidInput saying why not.
    `typed`: text a person typed into a form (no exponent)."""
    return parse_decimal(value, "quantity", PLAIN_DECIMAL_TEXT if typed else DECIMAL_TEXT)


def parse_decimal(value, field: str, pattern: re.Pattern = DECIMAL_TEXT) -> Decimal:
    """A number from a JSON number or a decimal string (exact), or InvalidInput naming `field`:
    the one reading of a decimal every way in uses (API bodies, forms, tool arguments, CSV cells)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise InvalidInput(f"{field} must be a number", {"field": field})
    if isinstance(value, float):
        text = repr(value)  # the shortest text that is this float: 0.1 is "0.1"
    elif isinstance(value, str):
        text = value.strip()
    else:
        try:
            text = str(value)
        except ValueError:  # an int of more digits than Python will print
            text = "9" * (MAX_QUANTITY_CHARS + 1)
    if text.lower().lstrip("+-") in ("nan", "snan", "inf", "infinity"):
        raise InvalidInput(f"{field} must be a finite number", {"field": field})
    if len(text) > MAX_QUANTITY_CHARS:
        raise InvalidInput(
            f"{field} must be a number of at most {MAX_QUANTITY_CHARS} characters", {"field": field}
        )
    if not pattern.fullmatch(text):
        raise InvalidInput(
            f"{field} must be a number written with the digits 0-9 and an optional decimal point "
            f"(like 12.5), got {quoted(value)}",
            {"field": field},
        )
    try:
        return Decimal(text)
    except InvalidOperation as exc:  # the pattern above makes this unreachable, but never a 500
        raise InvalidInput(f"{field} must be a number, got {quoted(value)}", {"field": field}) from exc


def checked_decimal(
    value, field: str, places: int, maximum: Decimal, minimum: Decimal = Decimal(0)
) -> Decimal:
    """`parse_decimal`, then within [minimum, maximum] and at most `places` decimals, as the column
    holds it: checked here, before any database sees it ("1e-16384" is a 500 on PostgreSQL, a
    silent 0 on SQLite; a fourth decimal would be rounded away by one and kept by the other)."""
    number = parse_decimal(value, field)
    if not minimum <= number <= maximum:
        raise InvalidInput(
            f"{field} must be from {minimum} to {maximum}, got {_short(value)}", {"field": field}
        )
    if number != 0 and (number.adjusted() < -places or number != number.quantize(Decimal(1).scaleb(-places))):
        raise InvalidInput(f"{field} has at most {places} decimals, got {_short(value)}", {"field": field})
    return number + 0  # "-0" is 0


def canonical_quantity(value) -> str:
    """What a quantity means, as text: 5, 5.0, "5" and "5.000" are all "5" (an idempotent retry
    compares meanings, not spellings). Raises InvalidInput as parse_quantity does."""
    quantity = parse_quantity(value)
    return "0" if quantity == 0 else str(quantity.normalize())


def canonical_unit(unit: str) -> str:
    key = (unit or "").strip()
    canonical = _ALIASES.get(key) or _ALIASES.get(key.lower())
    if canonical is None:
        raise InvalidInput(f"unknown unit {quoted(unit)}; use kg, g, 斤, t, L, mL or pcs")
    return canonical


def dimension(unit: str) -> str:
    """mass, volume or count: what a unit measures (one not known here counts pieces)."""
    return _UNITS.get(unit, ("count",))[0]


def unit_or_pieces(word: str) -> str:
    """The unit a word names (公斤, ml, 片), pieces when it names none (袋, 盒, 粒)."""
    return _ALIASES.get(word.lower(), "pcs")


def convert(quantity: Decimal, unit: str | None, to_unit: str) -> Decimal:
    """Quantity in `unit` expressed in `to_unit` (the material's unit), to 3 decimals."""
    target = canonical_unit(to_unit)
    source = canonical_unit(unit) if unit else target
    (dim_from, f_from), (dim_to, f_to) = _UNITS[source], _UNITS[target]
    if dim_from != dim_to:
        raise InvalidInput(f"cannot convert {unit} to {to_unit}: this material is counted in {to_unit}")
    if abs(quantity) > MAX_QUANTITY:
        raise InvalidInput(
            f"quantity {_short(quantity)} is beyond any stock this warehouse could hold",
            {"field": "quantity"},
        )
    # Far below a thousandth of any unit (1e-999999): refused before any arithmetic, which would
    # underflow to 0 and book nothing, or a stocktake of 0.
    if quantity != 0 and quantity.adjusted() < -12:
        raise InvalidInput(
            f"quantity {_short(quantity)} {unit or to_unit} is less than 0.001 {to_unit}: "
            f"quantities have at most 3 decimals in {to_unit}",
            {"field": "quantity"},
        )
    exact = quantity * f_from / f_to
    converted = exact.quantize(QUANTUM, rounding=ROUND_HALF_UP)
    if converted != exact:  # never round a booking: 0.0005 kg is not 0.001 kg, nor nothing
        asked = f"{_short(quantity)} {unit or to_unit}"
        if source != target:
            asked += f" is {_short(f'{exact.normalize():f}')} {to_unit}"
        raise InvalidInput(
            f"quantity {asked}: quantities have at most 3 decimals in {to_unit}", {"field": "quantity"}
        )
    return converted


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:40]}…"


def fmt_quantity(value: Decimal) -> str:
    """1.500 -> '1.5', 20.000 -> '20'."""
    text = format(Decimal(value).quantize(QUANTUM), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
