"""Slot parsing: the quantities, units, packs, periods, dates and codes in what staff type
(numbers.py reads a number, periods.py a period or a due date).

Each finder returns the spans it used, so the rest of the text can be read for material names
without them. Numbers may be Arabic or Chinese (二十, 两, 半, 一百五), units Chinese or English
(公斤, 斤, 克, 吨, 升, kg, g, L, pcs), packs counted with their size (3袋，每袋25公斤 = 75 kg;
一箱12升; 6 cartons, 500 per carton).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.numbers import CN_NUMBER, DIGITS, MAGNITUDE, NUMBER, number
from inventory_ai.assistant.providers.offline.periods import Period, due_date, period

__all__ = [
    "CN_NUMBER",
    "DIGITS",
    "NUMBER",
    "PACKS",
    "UNITS",
    "Period",
    "Quantity",
    "Slots",
    "number",
    "parse",
]

UNITS = words.UNITS  # unit -> how it is said (offline_words.json)
PACKS = words.PACKS
_UNIT = "|".join(f"(?P<u_{i}>{p})" for i, p in enumerate(UNITS.values()))
_UNIT_NAMES = list(UNITS)
_END = r"(?![a-zA-Z])"
_CJK_END = r"(?:(?<=[\u4e00-\u9fff])|(?![a-zA-Z]))"  # 2盒dark chocolate: a Chinese pack may touch English


def _unit_of(match: re.Match) -> str | None:
    for index, name in enumerate(_UNIT_NAMES):
        if match.groupdict().get(f"u_{index}"):
            return name
    return None


@dataclass
class Quantity:
    amount: Decimal
    unit: str | None  # kg, g, 斤, t, L, mL, pcs; None: the material's own unit
    packs: Decimal | None = None  # "3袋" without a size: the count of packs (the spec may tell their size)
    pack: str | None = None
    span: tuple[int, int] = (0, 0)
    more_spans: tuple[tuple[int, int], ...] = ()  # a pack's size said apart from its count
    word: str | None = None  # the unit as typed (片, 块), where a spec may name it as a pack


_SIZE_AFTER_COUNT = re.compile(rf"^(?P<size>{NUMBER})\s*(?:{_UNIT}){_END}", re.I)  # 一箱12升: right after
_SIZE_EACH = [
    # 每袋25公斤 / 每箱1000个 / 一袋25公斤 / per carton 500 / per bag 25 kg
    re.compile(rf"(?:每|一)\s*(?:{PACKS})\s*(?P<size>{NUMBER})\s*(?:{_UNIT})?{_END}", re.I),
    re.compile(rf"(?:per|each|a)\s+(?:{PACKS})\s*(?P<size>{NUMBER})\s*(?:{_UNIT})?{_END}", re.I),
    # 25 kg each / 25公斤一袋 / 500 per carton / 25kg/袋
    re.compile(
        rf"(?P<size>{NUMBER})\s*(?:{_UNIT})?\s*(?:each|apiece|per\s+(?:{PACKS})|a\s+(?:{PACKS})|/\s*(?:{PACKS})|一(?:{PACKS}))(?![a-z])",
        re.I,
    ),
    # 3 bags of 25 kg
    re.compile(rf"^\s*of\s+(?P<size>{NUMBER})\s*(?:{_UNIT}){_END}", re.I),
]
_PLAIN = re.compile(
    rf"(?:(?<=\bx)|(?<=×)|(?<![A-Za-z\d.])|(?=[零〇一二两三四五六七八九十百千万]))(?P<n>{NUMBER})\s*(?:{_UNIT})(?P<half>半(?![成年月天]))?{_CJK_END}",
    re.I,
)  # 十七公斤半, not 半成品
_PACK_ONLY = re.compile(
    rf"(?:(?<=\bx)|(?<=×)|(?<![A-Za-z\d.])|(?=[零〇一二两三四五六七八九十百千万]))(?P<n>{NUMBER}|half an?)\s*(?:整|满|散装?的?|(?:full|whole|sealed|unopened|intact|loose|open(?:ed)?|extra|more)\s+)?(?P<pack>{PACKS})(?P<half>半)?{_CJK_END}",
    re.I,
)  # 3袋, two cases, half a case, 3整箱, three full cases
_TIMES = re.compile(
    rf"(?<![A-Za-z\d.])(?P<n>{DIGITS})\s*[x×*]\s*(?P<size>{DIGITS})\s*(?:{_UNIT}){_END}(?:\s*(?:{PACKS}){_END})?",
    re.I,
)
# 两 after a number is the old weight unit (50 g): 三两 = 150 g. (两 before a pack is the number two.)
_LIANG = re.compile(
    r"(?<![\d.])(?P<n>\d+(?:\.\d+)?|[一二三四五六七八九十半]{1,3})两(?![箱袋包桶瓶罐盒件托卷块个天周月])"
)
_LABEL_BEFORE = re.compile(words.LABEL_BEFORE, re.I)  # line 2, shelf 14 (offline_words.json)
_A_DOCUMENT = re.compile(words.A_DOCUMENT, re.I)  # 一个采购申请, 一份报表: no amount of stock
_BARE = re.compile(
    rf"(?<![A-Za-z\d.#,-])(?P<n>(?:{DIGITS})\s*(?:{MAGNITUDE})|{DIGITS}|[零一二两三四五六七八九十百千万]{{2,}}(?=\s*(?:$|[,，。.!！])))(?!\d|[.,]\d|\s*(?:天|days?|号|日|月|点|%|\s*-?\s*(?:寸|英寸|inch|in\.?\s*(?:cake|box|tin|pan|round|square|ring)|cm\b|mm\b)|\"))"
)  # not a day, a date, a share or a size (8 inch cake boxes)
CODE = re.compile(r"(?<![A-Za-z0-9])[mM]\d{3,}(?![0-9])")


def _size(text: str, after: int, taken) -> tuple[Decimal, str | None, tuple[int, int]] | None:
    """What one pack holds, said right after its count or further on ("每袋25公斤", "500 per carton")."""
    if m := _SIZE_AFTER_COUNT.match(text[after:]):
        size = number(m.group("size"))
        if size is not None:
            return size, _unit_of(m), (after + m.start(), after + m.end())
    for pattern in _SIZE_EACH:
        for m in (
            pattern.finditer(text, after)
            if not pattern.pattern.startswith("^")
            else [pattern.match(text[after:])]
        ):
            if m is None:
                continue
            start, end = (
                (m.start(), m.end())
                if not pattern.pattern.startswith("^")
                else (after + m.start(), after + m.end())
            )
            size = number(m.group("size"))
            if size is not None and all(end <= a or start >= b for a, b in taken):
                return size, _unit_of(m), (start, end)
    return None


def quantities(text: str) -> list[Quantity]:
    """Every quantity, packs counted with their size first; spans do not overlap."""
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def free(span):
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for m in _TIMES.finditer(text):  # 12 x 5L tins, 6×500g: the count times the size
        count, size = number(m.group("n")), number(m.group("size"))
        if count is not None and size is not None and free(m.span()):
            found.append(Quantity(count * size, _unit_of(m), span=m.span()))
            taken.append(m.span())
    for m in _LIANG.finditer(text):
        amount = number(m.group("n"))
        if amount is not None:
            found.append(Quantity(amount * 50, "g", span=m.span()))
            taken.append(m.span())
    for m in _PACK_ONLY.finditer(text):
        count = number(m.group("n"))
        if count is None or not free(m.span()):
            continue
        if m.group("n").lower() in ("a", "an") and not re.match(r"\s+of\b", text[m.end() :]):
            continue  # "took a bag of cake flour" is one bag; "a box" on its own is no amount
        if m.group("half"):
            count += Decimal("0.5")
        size = _size(text, m.end(), taken + [m.span()])
        if size is None:
            found.append(Quantity(count, None, packs=count, pack=m.group("pack"), span=m.span()))
            taken.append(m.span())
            continue
        amount, unit, size_span = size
        inner = re.match(rf"\s*(?:{PACKS}){_END}", text[size_span[1] :], re.I) if unit is None else None
        if inner:  # 两托，每托20袋: forty bags, each as the spec says
            size_span = (size_span[0], size_span[1] + inner.end())
            packs = count * amount
            found.append(Quantity(packs, None, packs, inner.group(0).strip(), m.span(), (size_span,)))
        else:
            found.append(Quantity(count * amount, unit, span=m.span(), more_spans=(size_span,)))
        taken += [m.span(), size_span]
    for m in _PLAIN.finditer(text):
        amount = number(m.group("n"))
        if amount is None or not free(m.span()) or CODE.search(text[max(0, m.start() - 1) : m.end()]):
            continue
        unit = _unit_of(m)
        if unit == "pcs" and _A_DOCUMENT.match(text, m.end()):
            continue  # 提交一个采购申请, 做一张表: one request, not one piece of anything
        if (
            m.group("n").lower() in ("a", "an")
            and unit in (None, "t")
            and not re.search(r"\bton", m.group(0), re.I)
        ):
            continue
        if m.group("half"):
            amount += Decimal("0.5")
        word = m.group(f"u_{_UNIT_NAMES.index(unit)}") if unit else None
        found.append(Quantity(amount, unit, span=m.span(), word=word))
        taken.append(m.span())
    for m in _BARE.finditer(text):
        if not free(m.span()) or CODE.search(text[max(0, m.start() - 1) : m.end() + 1]):
            continue
        if _LABEL_BEFORE.search(text[: m.start()]):
            continue  # line 2, shelf 14, PO 7731, 3号线: a name for something, not an amount
        found.append(Quantity(number(m.group("n")), None, span=m.span()))
        taken.append(m.span())
    return sorted(found, key=lambda q: q.span)


# --- how many rows ------------------------------------------------------------------------------

_LIMITS = [
    re.compile(
        rf"(?:top|first|last)\s*(?P<n>{NUMBER})(?![\d.])(?!\s*(?:days?|weeks?|months?))", re.I
    ),  # top 10
    re.compile(rf"(?:最近|最新)\s*(?P<n>{NUMBER})\s*(?:条|笔|次)"),  # 最近10条流水
    re.compile(rf"(?P<n>{NUMBER})\s+(?:most|worst|biggest|largest|lowest)\b", re.I),  # 5 most urgent
    re.compile(rf"前\s*(?P<n>{NUMBER})\s*(?:个|种|名|项|条)?"),  # 前10, 前三个
    re.compile(rf"(?:列|给我|显示|看|挑|选)\s*(?P<n>{NUMBER})\s*(?:个|种|项|条)"),  # 列三个
    re.compile(rf"最\S{{1,4}}的\s*(?P<n>{NUMBER})\s*(?:个|种|项|条)"),  # 最紧急的三个
]


def row_limit(text: str) -> tuple[int, tuple[int, int]] | None:
    """How many rows someone asked for ("top 5", "前三个", "列10条"), 1-50."""
    for pattern in _LIMITS:
        if m := pattern.search(text):
            n = number(m.group("n"))
            if n == 1 and m.group("n") == "一" and pattern is _LIMITS[4]:
                continue  # 给我一个…表: "give me a table", not one row
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
    slots.quantities = quantities(masked)
    slots.spans += [span for q in slots.quantities for span in (q.span, *q.more_spans)]
    return slots


def blank(text: str, spans: list[tuple[int, int]], fill: str = " ") -> str:
    """The text with these spans replaced by spaces (positions kept)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = fill
    return "".join(chars)
