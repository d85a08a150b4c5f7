"""Slot parsing: the quantities, units, packs, periods, dates and codes in what staff type.

Each finder returns the spans it used, so the rest of the text can be read for material names
without them. Numbers may be Arabic or Chinese (二十, 两, 半, 一百五), units Chinese or English
(公斤, 斤, 克, 吨, 升, kg, g, L, pcs), packs counted with their size (3袋，每袋25公斤 = 75 kg;
一箱12升; 6 cartons, 500 per carton).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000, "万": 10000}
CN_NUMBER = r"[零〇一壹二两贰三叁四五六七八九十拾百佰千仟万]+(?:点[零〇一二三四五六七八九]+)?"
DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 1,150 is a thousand and more; 2.5 a decimal
NUMBER = (
    rf"(?:{DIGITS}|{CN_NUMBER}|半|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|half)"
)
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "twenty": 20, "half": Decimal("0.5")}  # fmt: skip

UNITS = {
    "kg": r"公斤|千克|kgs?|kilograms?|kilos?",
    "g": r"克|grams?|g",
    "斤": r"斤|jin",
    "t": r"吨|tonnes?|tons?|t",
    "mL": r"毫升|ml",
    "L": r"升|公升|litres?|liters?|l",
    "pcs": r"个|只|枚|张|根|片|卷|pcs|pieces?|ea|units?",
}
PACKS = (
    r"袋|包|箱|桶|瓶|罐|盒|件|托|卷|块|bags?|sacks?|boxe?s|box|cases?|cs|cartons?|ctns?|crates?|buckets?|drums?|"
    r"tubs?|pails?|jars?|packs?|packets?|bottles?|cans?|tins?|pallets?|rolls?|blocks?|bricks?"
)
_UNIT = "|".join(f"(?P<u_{i}>{p})" for i, p in enumerate(UNITS.values()))
_UNIT_NAMES = list(UNITS)
_END = r"(?![a-zA-Z])"


def cn_number(text: str) -> Decimal | None:
    """二十 -> 20, 两千 -> 2000, 一百五 -> 150, 三点五 -> 3.5, 半 -> 0.5."""
    if text == "半":
        return Decimal("0.5")
    if "点" in text:
        whole, _, fraction = text.partition("点")
        head = cn_number(whole)
        digits = "".join(str(_CN_DIGITS[ch]) for ch in fraction if ch in _CN_DIGITS)
        return None if head is None or not digits else Decimal(f"{head}.{digits}")
    total, section, number, last_unit = 0, 0, 0, 1
    for ch in text:
        if ch in _CN_DIGITS:
            number = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            if unit == 10000:
                total += (section + number) * unit
                section = 0
            else:
                section += (number or 1) * unit
            number, last_unit = 0, unit
        else:
            return None
    if number and last_unit >= 100 and text[-1] in _CN_DIGITS and len(text) >= 2 and text[-2] in _CN_UNITS:
        number *= last_unit // 10  # 一百五 = 150, 两千三 = 2300
    return Decimal(total + section + number)


def number(text: str) -> Decimal | None:
    if re.fullmatch(r"half an?", text.strip(), re.I):
        return Decimal("0.5")
    text = text.strip().lower()
    if re.fullmatch(DIGITS, text):
        return Decimal(text.replace(",", ""))
    if text in _EN_NUMBERS:
        return Decimal(_EN_NUMBERS[text])
    return cn_number(text)


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
    rf"(?<![A-Za-z\d.])(?P<n>{NUMBER})\s*(?:{_UNIT})(?P<half>半(?![成年月天]))?{_END}", re.I
)  # 十七公斤半, not 半成品
_PACK_ONLY = re.compile(
    rf"(?<![A-Za-z\d.])(?P<n>{NUMBER}|half an?)\s*(?:整|满|(?:full|whole|sealed|unopened|intact)\s+)?(?P<pack>{PACKS})(?P<half>半)?{_END}",
    re.I,
)  # 3袋, two cases, half a case, 3整箱, three full cases
# 两 after a number is the old weight unit (50 g): 三两 = 150 g. (两 before a pack is the number two.)
_LIANG = re.compile(
    r"(?<![\d.])(?P<n>\d+(?:\.\d+)?|[一二三四五六七八九十半]{1,3})两(?![箱袋包桶瓶罐盒件托卷块个天周月])"
)
# What one asks the assistant for, counted: 一个采购申请, 一份报表, 一张表 (never an amount of stock).
_A_DOCUMENT = re.compile(
    r"\s*(?:新的?)?(?:采购|请购|申请|订单|单子|报表|表格?|清单|意图|说法|问题|关键词|提醒|csv|excel|markdown)",
    re.I,
)
_BARE = re.compile(
    rf"(?<![A-Za-z\d.#,-])(?P<n>{DIGITS})(?![\d.,]|\s*(?:天|days?|号|日|月|点|%|寸|英寸|inch|in\b|cm\b|mm\b|\"))"
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
        found.append(Quantity(amount, unit, span=m.span()))
        taken.append(m.span())
    for m in _BARE.finditer(text):
        if not free(m.span()) or CODE.search(text[max(0, m.start() - 1) : m.end() + 1]):
            continue
        found.append(Quantity(number(m.group("n")), None, span=m.span()))
        taken.append(m.span())
    return sorted(found, key=lambda q: q.span)


# --- periods -----------------------------------------------------------------------------------


@dataclass
class Period:
    since: date
    until: date
    span: tuple[int, int] = (0, 0)


_N = rf"({NUMBER})"
_PERIODS = [
    (rf"(?:最近|近|过去|前)\s*{_N}\s*(?:天|日)|(?:last|past|previous)\s+{_N}\s+days?|{_N}\s+days?", "days"),
    (
        rf"(?:最近|近|过去|前)\s*{_N}\s*(?:个)?(?:星期|周|礼拜)|(?:last|past)\s+{_N}\s+(?:weeks?|wks?)",
        "weeks",
    ),
    (
        r"(?:最近|近|过去)?一(?:个)?(?:星期|周|礼拜)|(?:last|past)\s+(?:7\s+days|seven\s+days)|past\s+week|(?:over|in)\s+the\s+last\s+week",
        "week7",
    ),
    (r"最近一个月|近一个月|过去一个月|past\s+month|last\s+30\s+days", "month30"),
    (r"上周|上星期|上个星期|上礼拜|last\s+(?:week|wk)s?\b", "last_week"),
    (r"本周|这周|这个星期|这星期|这礼拜|this\s+(?:week|wk)s?\b", "this_week"),
    (r"上个月|上月|last\s+month", "last_month"),
    (r"本月|这个月|这月|当月|this\s+month", "this_month"),
    (r"前天|the\s+day\s+before\s+yesterday", "day_before"),
    (r"昨天|昨日|yesterday", "yesterday"),
    (r"今天|今日|今早|今晚|this\s+morning|this\s+afternoon|today|tonight", "today"),
]
_PERIOD_RES = [(re.compile(p, re.I), kind) for p, kind in _PERIODS]


_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# A month's name or its usual abbreviation, as a whole word ("margarine" and "mayonnaise" are not).
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?(?![a-z])"
)
_EN_DAY = r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?"
_NOT_AN_AMOUNT = r"(?![\d.]|\s*(?:%|公斤|千克|克|斤|吨|升|袋|箱|包|瓶|桶|个|kgs?\b|g\b|grams?\b|l\b|ml\b|pcs\b|boxe?s?\b|bags?\b|cases?\b))"
_ZH_DATE = r"(?:(?:20\d\d)年)?(?:\d{1,2})月(?:\d{1,2})[日号]?"
# Two dates of one range, the second's month and both years optional ("11月1号到10号",
# "10月15号到31号", "11月1号到11月底", "nov 1 to nov 10", "between oct 20 and oct 27", "from the 1st
# to the 10th"). Never a pair of amounts ("margarine 5 to 10 kg").
_RANGES = [
    re.compile(
        r"(?:(?P<y1>20\d\d)年)?(?P<m1>\d{1,2})月(?P<d1>\d{1,2})[日号]?\s*(?:到|至|~|～|-|–|—)\s*"
        r"(?:(?P<y2>20\d\d)年)?(?:(?P<m2end>\d{1,2})月底|(?:(?P<m2>\d{1,2})月)?(?P<d2>\d{1,2})[日号]?)"
        + _NOT_AN_AMOUNT
    ),
    re.compile(
        rf"(?:\bbetween\s+(?P<bm1>{_MONTH_NAME})\s+(?P<bd1>{_EN_DAY})\s+and\s+|"
        rf"\b(?P<em1>{_MONTH_NAME})\s+(?P<ed1>{_EN_DAY})\s*(?:to|until|till|through|thru|-|–)\s*)"
        rf"(?:(?P<em2>{_MONTH_NAME})\s+)?(?P<ed2>{_EN_DAY})\b" + _NOT_AN_AMOUNT,
        re.I,
    ),
    re.compile(r"(?<![月\d])(?P<td1>\d{1,2})[号日]\s*(?:到|至|~|-)\s*(?P<td2>\d{1,2})[号日]"),
    re.compile(
        r"\bfrom\s+the\s+(?P<td1>\d{1,2})(?:st|nd|rd|th)\s+(?:to|until|till)\s+the\s+(?P<td2>\d{1,2})(?:st|nd|rd|th)\b",
        re.I,
    ),
]


def _month(name: str | None) -> int | None:
    return _MONTHS.index(name.lower()[:3]) + 1 if name else None


def _day(text: str) -> int:
    return int(re.search(r"\d+", text).group(0))


def _date_range(text: str, today: date) -> Period | None:
    for pattern in _RANGES:
        m = pattern.search(text)
        if not m:
            continue
        g = {k: v for k, v in m.groupdict().items() if v}
        year = int(g["y1"]) if "y1" in g else None
        if "td1" in g:  # days of this month; of last month when they have not come yet
            start_month = today.replace(day=1)
            if int(g["td1"]) > today.day:
                start_month = (start_month - timedelta(days=1)).replace(day=1)
            year, m1, d1, m2, d2 = start_month.year, start_month.month, int(g["td1"]), None, int(g["td2"])
        elif "m1" in g:
            m1, d1 = int(g["m1"]), int(g["d1"])
            m2 = int(g.get("m2end") or g.get("m2") or 0) or None
            d2 = int(g["d2"]) if "d2" in g else None  # None: the end of month m2 (11月底)
        else:
            m1, d1 = _month(g.get("bm1") or g.get("em1")), _day(g.get("bd1") or g.get("ed1"))
            m2, d2 = _month(g.get("em2")), _day(g["ed2"])
        try:
            since = date(year or today.year, m1, d1)
            if year is None and since > today:  # "nov 20 to 30" said in January: last year's
                since = since.replace(year=since.year - 1)
            end_month = m2 or m1
            end_year = int(g["y2"]) if "y2" in g else since.year + (1 if end_month < m1 else 0)  # 12月→1月
            if d2 is None:
                d2 = (
                    (date(end_year, end_month, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
                ).day
            until = date(end_year, end_month, d2)
        except ValueError:  # no such day (2月30号): not a period
            continue
        if until < since:  # "11月10号到11月1号": the same days, said backwards
            since, until = until, since
        return Period(since, until, m.span())
    return None


def period(text: str, today: date) -> Period | None:
    if found := _date_range(text, today):
        return found
    for pattern, kind in _PERIOD_RES:
        m = pattern.search(text)
        if not m:
            continue
        if kind in ("days", "weeks"):
            n = number(next(g for g in m.groups() if g))
            if n is None or n < 1:
                continue
            days = min(366, int(n) * (7 if kind == "weeks" else 1))
            return Period(today - timedelta(days=days - 1), today, m.span())
        since, until = {
            "week7": (today - timedelta(days=6), today),
            "month30": (today - timedelta(days=29), today),
            "today": (today, today),
            "yesterday": (today - timedelta(days=1), today - timedelta(days=1)),
            "day_before": (today - timedelta(days=2), today - timedelta(days=2)),
            "this_week": (today - timedelta(days=today.weekday()), today),
            "last_week": (
                today - timedelta(days=today.weekday() + 7),
                today - timedelta(days=today.weekday() + 1),
            ),
            "this_month": (today.replace(day=1), today),
            "last_month": (
                (today.replace(day=1) - timedelta(days=1)).replace(day=1),
                today.replace(day=1) - timedelta(days=1),
            ),
        }[kind]
        return Period(since, until, m.span())
    return None


_ISO = re.compile(r"(?<!\d)(20\d\d)[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_CN_DATE = re.compile(r"(?:(20\d\d)年)?(\d{1,2})月(\d{1,2})[日号]")
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def due_date(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    """A date something is needed by: 2026-12-05, 12月5日, 下周一, next Monday, by Friday."""
    if m := _ISO.search(text):
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m.span()
        except ValueError:
            return None
    if m := _CN_DATE.search(text):
        year = int(m.group(1)) if m.group(1) else today.year
        try:
            found = date(year, int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
        if not m.group(1) and found < today:
            found = found.replace(year=year + 1)
        return found, m.span()
    if m := re.search(r"(下)?(?:周|星期|礼拜)([一二三四五六日天])", text):
        weekday = _WEEKDAYS[m.group(2)]
        start = (
            today + timedelta(days=7 - today.weekday())
            if m.group(1)
            else today - timedelta(days=today.weekday())
        )
        found = start + timedelta(days=weekday)
        return (found if found > today else found + timedelta(days=7)), m.span()
    if m := re.search(r"\b(next\s+|by\s+|before\s+)?(" + "|".join(_EN_WEEKDAYS) + r")\b", text, re.I):
        weekday = _EN_WEEKDAYS.index(m.group(2).lower())
        ahead = (weekday - today.weekday()) % 7 or 7
        if (m.group(1) or "").strip().lower() == "next" and ahead < 7:
            ahead += 7 if today.weekday() < weekday else 0
        return today + timedelta(days=ahead), m.span()
    return None


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
