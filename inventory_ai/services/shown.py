"""How times and figures look to a person: the one formatter every page, table, chart, card and
sign-off goes through.

Times are stored in UTC (naive); a person sees the plant's clock (INVENTORY_AI_TIMEZONE, clock.py):
a movement booked at 02:56 on 11-27 in Shanghai is on 11-27, not on UTC's 11-26. Figures get
thousands separators (1,000 kg; 6,200.00): what the model and the API read stays plain ("1000"),
since a separator in data is a parsing hazard, not a help.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation

from inventory_ai.services import clock
from inventory_ai.services.units import fmt_quantity

# The forms a time is shown in.
FORMS = {
    "minute": "%Y-%m-%d %H:%M",  # the sign-off page, a decision's time
    "day": "%Y-%m-%d",  # a table's date
    "month_day": "%m-%d",  # under a chart's axis
    "time": "%H:%M",  # today's movements
}


def plant_time(moment: datetime) -> datetime:
    """A stored (naive UTC) or aware instant on the plant's clock."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(clock.PLANT)


def plant_day(moment: datetime) -> date:
    return plant_time(moment).date()


def when(moment: datetime | date | None, form: str = "minute") -> str:
    """A time as a person reads it, on the plant's clock; a date is shown as it is."""
    if moment is None:
        return ""
    if not isinstance(moment, datetime):
        return moment.strftime(FORMS[form])
    return plant_time(moment).strftime(FORMS[form])


def number(value: Decimal | int | float | str) -> str:
    """A quantity with thousands separators and no trailing zeros: 1200.500 -> '1,200.5'."""
    plain = fmt_quantity(Decimal(str(value)))
    sign, digits = ("-", plain[1:]) if plain.startswith("-") else ("", plain)
    whole, _, fraction = digits.partition(".")
    return sign + f"{int(whole):,}" + ("." + fraction if fraction else "")


def money(value: Decimal | int | float | str, places: int = 2) -> str:
    """CNY with separators and its cents: 6200 -> '6,200.00'."""
    return f"{Decimal(str(value)):,.{places}f}"


def figure(text) -> str:
    """A figure as a tool result wrote it ("1200", "-20.5", "6200.00") with separators; anything
    that is not a plain number (a code, a name, a date) is left as it is."""
    if isinstance(text, bool) or text is None:
        return "" if text is None else str(text)
    raw = str(text).strip()
    if not raw or not all(ch.isdigit() or ch in ".-" for ch in raw) or not any(ch.isdigit() for ch in raw):
        return str(text)
    try:
        value = Decimal(raw)
    except InvalidOperation:
        return str(text)
    if not value.is_finite():
        return str(text)
    if "." in raw and len(raw.partition(".")[2]) == 2:  # money keeps its cents
        return money(value)
    return number(value)
