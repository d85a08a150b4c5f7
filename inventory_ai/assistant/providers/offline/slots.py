"""Slot parsing: the quantities, units, packs, periods, dates and codes in what staff type (numbers.py
reads a number, periods.py a period or a due date), each with the span it used, so the rest can be
read for names. Packs are counted with their size (3袋，每袋25公斤 = 75 kg; 6 cartons, 500 per carton).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.numbers import DIGITS, MAGNITUDE, NUMBER, number
from inventory_ai.assistant.providers.offline.periods import Period, due_date, period

PACKS = words.PACKS
# offline_words.json "units" (unit -> how it is said), each its own group: which one was said
_UNIT = "|".join(f"(?P<u_{i}>{p})" for i, p in enumerate(words.UNITS.values()))
_UNIT_NAMES = list(words.UNITS)
_END = r"(?![a-zA-Z])"
_CJK_END = r"(?:(?<=[\u4e00-\u9fff])|(?![a-zA-Z]))"  # 2盒dark chocolate: a Chinese pack may touch English


def _unit_of(match: re.Match) -> str | None:
    return next((name for i, name in enumerate(_UNIT_NAMES) if match.groupdict().get(f"u_{i}")), None)


@dataclass
class Quantity:
    amount: Decimal
    unit: str | None  # kg, g, 斤, t, L, mL, pcs; None: the material's own unit
    packs: Decimal | None = None  # "3袋" without a size: the count of packs (the spec may tell their size)
    pack: str | None = None
    span: tuple[int, int] = (0, 0)
    more_spans: tuple[tuple[int, int], ...] = ()  # a pack's size said apart from its count
    word: str | None = None  # the unit as typed (片, 块), where a spec may name it as a pack


# The amounts as they are said, in the order they are read (offline_words.json "slots", with its docs)
_PIECES = {"NUMBER": NUMBER, "DIGITS": DIGITS, "MAGNITUDE": MAGNITUDE, "UNIT": _UNIT, "PACKS": PACKS, "END": _END,
           "CJK_END": _CJK_END, "CENTS": r"(?:[零一二两三四五六七八九\d](?=\s*(?:一|每|/|$|[，,。；;])))?"}  # fmt: skip
_SAID = {name: words.filled(p, _PIECES) if isinstance(p, str) else p for name, p in words.SLOTS.items()}
_SIZE_AFTER_COUNT, _PLAIN, _PACK_ONLY, _TIMES, _PACK_SIZE = (
    re.compile(_SAID[k], re.I) for k in ("size_after_count", "plain", "pack_only", "times", "pack_size")
)
_SIZE_EACH = [re.compile(words.filled(p, _PIECES), re.I) for p in _SAID["size_each"]]
_PRICES = [re.compile(words.filled(p, _PIECES), re.I) for p in _SAID["price"]]  # 单价7块, 45块一箱
_LIANG, _BARE = re.compile(_SAID["liang"]), re.compile(_SAID["bare"])  # case matters: "3 CM" is no size
_LABEL_BEFORE = re.compile(words.LABEL_BEFORE, re.I)  # line 2, shelf 14 (offline_words.json)
_A_DOCUMENT = re.compile(words.A_DOCUMENT, re.I)  # 一个采购申请, 一份报表: no amount of stock
CODE = re.compile(r"(?<![A-Za-z0-9])[mM]\d{3,}(?![0-9])")


def _size(text: str, after: int, taken) -> tuple[Decimal, str | None, tuple[int, int]] | None:
    """What one pack holds, said right after its count or further on ("每袋25公斤", "500 per carton")."""
    if m := _SIZE_AFTER_COUNT.match(text[after:]):
        size = number(m.group("size"))
        if size is not None:
            return size, _unit_of(m), (after + m.start(), after + m.end())
    for pattern in _SIZE_EACH:
        anchored = pattern.pattern.startswith("^")  # reads only what follows the count
        for m in [pattern.match(text[after:])] if anchored else pattern.finditer(text, after):
            span = (m.start() + after * anchored, m.end() + after * anchored) if m else (0, 0)
            if m is not None and (size := number(m.group("size"))) is not None and _clear(span, taken):
                return size, _unit_of(m), span
    return None


def _clear(span: tuple[int, int], taken) -> bool:
    return all(span[1] <= a or span[0] >= b for a, b in taken)


class _Found(list):
    """Quantities found so far, each with the spans it used: a later pass reads only what is free."""

    def __init__(self, text: str):
        super().__init__()
        self.text, self.taken = text, []

    def free(self, span: tuple[int, int]) -> bool:
        return _clear(span, self.taken)

    def add(self, quantity: Quantity, *spans: tuple[int, int]) -> None:
        self.append(quantity)
        self.taken += spans or [quantity.span]


def quantities(text: str) -> list[Quantity]:
    """Every quantity, packs counted with their size first; spans do not overlap."""
    found = _Found(text)
    for m in _TIMES.finditer(text):  # 12 x 5L tins, 6×500g: the count times the size
        count, size = number(m.group("n")), number(m.group("size"))
        if count is not None and size is not None and found.free(m.span()):
            found.add(Quantity(count * size, _unit_of(m), span=m.span()))
    for m in _LIANG.finditer(text):
        if (amount := number(m.group("n"))) is not None:
            found.add(Quantity(amount * 50, "g", span=m.span()))
    sizes = _PACK_SIZE.finditer(text)  # not one with a count of packs just before it (3袋，25公斤一袋)
    found.taken += [m.span() for m in sizes if not _PACK_ONLY.search(text, max(0, m.start() - 6), m.start())]
    for m in _PACK_ONLY.finditer(text):
        _packs(found, m)
    for m in _PLAIN.finditer(text):
        _plain(found, m)
    for m in _BARE.finditer(text):
        if not found.free(m.span()) or CODE.search(text[max(0, m.start() - 1) : m.end() + 1]):
            continue
        if not _LABEL_BEFORE.search(text[: m.start()]):  # line 2, shelf 14, PO 7731, 3号线: a name
            found.add(Quantity(number(m.group("n")), None, span=m.span()))
    found.sort(key=lambda q: q.span)
    return found


def _packs(found: _Found, m: re.Match) -> None:
    """A count of packs (3袋, two cases), with what each holds when that is said."""
    text, count = found.text, number(m.group("n"))
    if count is None or not found.free(m.span()):
        return
    if m.group("n").lower() in ("a", "an") and not re.match(r"\s+of\b", text[m.end() :]):
        return  # "took a bag of cake flour" is one bag; "a box" on its own is no amount
    if m.group("half"):
        count += Decimal("0.5")
    size = _size(text, m.end(), found.taken + [m.span()])
    if size is None:
        found.add(Quantity(count, None, packs=count, pack=m.group("pack"), span=m.span()))
        return
    amount, unit, size_span = size
    inner = re.match(rf"\s*(?:{PACKS}){_END}", text[size_span[1] :], re.I) if unit is None else None
    if inner:  # 两托，每托20袋: forty bags, each as the spec says
        size_span = (size_span[0], size_span[1] + inner.end())
        packs = count * amount
        found.add(
            Quantity(packs, None, packs, inner.group(0).strip(), m.span(), (size_span,)), m.span(), size_span
        )
    else:
        found.add(Quantity(count * amount, unit, span=m.span(), more_spans=(size_span,)), m.span(), size_span)


def _plain(found: _Found, m: re.Match) -> None:
    """An amount with its unit (20公斤, 5 kg, 十七公斤半)."""
    text, amount = found.text, number(m.group("n"))
    if amount is None or not found.free(m.span()) or CODE.search(text[max(0, m.start() - 1) : m.end()]):
        return
    unit = _unit_of(m)
    if unit == "pcs" and _A_DOCUMENT.match(text, m.end()):
        return  # 提交一个采购申请, 做一张表: one request, not one piece of anything
    if (
        m.group("n").lower() in ("a", "an")
        and unit in (None, "t")
        and not re.search(r"\bton", m.group(0), re.I)
    ):
        return
    if m.group("half"):
        amount += Decimal("0.5")
    word = m.group(f"u_{_UNIT_NAMES.index(unit)}") if unit else None
    found.add(Quantity(amount, unit, span=m.span(), word=word))


# --- how many rows ------------------------------------------------------------------------------

_LIMITS = [re.compile(p.replace("{N}", NUMBER), re.I) for p in words.ROW_LIMITS]  # offline_words.json


def row_limit(text: str) -> tuple[int, tuple[int, int]] | None:
    """How many rows someone asked for ("top 5", "前三个", "列10条"), 1-50."""
    for pattern in _LIMITS:
        n = number(m.group("n")) if (m := pattern.search(text)) else None
        if n is not None and n == n.to_integral_value() and 1 <= n <= 50:
            return int(n), m.span()
    return None


# --- what remains ------------------------------------------------------------------------------


@dataclass
class Slots:
    quantities: list[Quantity] = field(default_factory=list)
    period: Period | None = None
    due: date | None = None
    limit: int | None = None
    codes: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)


def parse(text: str, today: date) -> Slots:
    slots = Slots()
    slots.codes = [m.group(0).upper() for m in CODE.finditer(text)]
    slots.spans += [m.span() for m in CODE.finditer(text)]
    if found := period(text, today):
        slots.period = found
        slots.spans.append(found.span)
    if found := due_date(blank(text, slots.spans), today):
        slots.due, span = found
        slots.spans.append(span)
    if found := row_limit(blank(text, slots.spans)):
        slots.limit, span = found
        slots.spans.append(span)
    masked = blank(text, slots.spans)
    slots.spans += [m.span() for p in _PRICES for m in p.finditer(masked)]  # a price is no amount
    slots.quantities = quantities(blank(masked, slots.spans))
    slots.spans += slots.quantities.taken  # each amount's spans and the sizes said of the goods
    return slots


def blank(text: str, spans: list[tuple[int, int]], fill: str = " ") -> str:
    """The text with these spans replaced by spaces (positions kept)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = fill
    return "".join(chars)
