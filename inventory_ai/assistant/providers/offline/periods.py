"""Periods and due dates as staff say them: 今天, 上上周, 上上个月, 最近7天, "past fortnight", 今年以来/YTD,
上半年/H1, a quarter, 11月上旬, 上周五, 这周一到周三, ranges (11月1号到10号, "1 Nov to 15 Nov", 2026-11-01~2026-11-15),
a month (9月的, "in October", "Oct movements"), an open period (10号以后, "since 1 November", "from Nov 10 onwards");
and a purchase's needed-by date (2026-12-05, 12月5日, 下周一, "by Dec 1", 明年七月底前, 月底前)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.numbers import NUMBER, number


@dataclass
class Period:
    since: date
    until: date
    span: tuple[int, int] = (0, 0)


# offline_words.json "periods", their {N} the number said
_PERIOD_RES = [(re.compile(p.replace("{N}", f"({NUMBER})"), re.I), kind) for p, kind in words.PERIODS]
_MONTHS = words.CALENDAR["months"]  # "jan"…: a month's name by its first three letters


def _month(name: str | None) -> int | None:
    return _MONTHS.index(name.lower()[:3]) + 1 if name else None


def _day(text: str) -> int:  # "5th", 5, 五 (十月五号); a month's number too (11, 十一)
    return int(m.group(0)) if (m := re.search(r"\d+", text)) else int(number(text))


def _date_range(m: re.Match, text: str, today: date) -> Period | None:
    """Two dates of one range (11月1号到10号, "nov 1 to nov 10", 11/2-11/8), or None (2月30号)."""
    g = {k: v for k, v in m.groupdict().items() if v}
    year = int(g["y1"]) if "y1" in g else None
    if "te1" in g:
        g["td1"], g["td2"] = g["te1"], g["te2"]
    if "td1" in g:  # days of this month; of last month when they have not come yet
        start_month = _months_before(today.replace(day=1), int(g["td1"]) > today.day)
        year, m1, d1, m2, d2 = start_month.year, start_month.month, int(g["td1"]), None, int(g["td2"])
    elif "m1" in g:
        m1, d1 = _day(g["m1"]), _day(g["d1"])
        m2 = int(g.get("m2end") or g.get("m2") or 0) or None
        d2 = _day(g["d2"]) if "d2" in g else None  # None: the end of month m2 (11月底)
        if max(m1, m2 or 0) > 12 and "d2" in g:  # 1/11到15/11: the day first, as much of the world writes
            m1, d1, m2, d2 = d1, m1, d2, m2
    else:
        m1, d1 = _month(g.get("bm1") or g.get("em1") or g.get("em2")), _day(g.get("bd1") or g.get("ed1"))
        m2, d2 = _month(g.get("em2")), _day(g["ed2"])
    try:
        since = date(year or today.year, m1, d1)
        if year is None and since > today:  # "nov 20 to 30" said in January: last year's
            since = since.replace(year=since.year - 1)
        end_month = m2 or m1
        end_year = int(g["y2"]) if "y2" in g else since.year + (1 if end_month < m1 else 0)  # 12月→1月
        until = date(end_year, end_month, d2) if d2 else _month_end(end_year, end_month)
    except ValueError:  # no such day (2月30号): not a period
        return None
    if until < since:  # "11月10号到11月1号": the same days, said backwards
        since, until = until, since
    return Period(since, until, m.span())


def _since_weekday(m: re.Match, text: str, today: date) -> Period | None:
    """ "since Monday", 周一以来: from that day, the latest one not after today, to today."""
    said = m.group("zh") or m.group("en")[:3].lower()
    day = _WEEKDAYS[said] if m.group("zh") else [n[:3] for n in _EN_WEEKDAYS].index(said)
    since = today - timedelta(days=(today.weekday() - day) % 7 or (7 if m.group("last") else 0))
    if m.group("zl"):  # 自上周五以来: last week's Friday, whatever today is
        since = today - timedelta(days=today.weekday() + 7 - day)
    return Period(since, today, m.span())  # "since last Friday" said on a Friday: a week ago


def _week_days(m: re.Match, text: str, today: date) -> Period | None:
    """上周五, 这周一到周三: a day or days of this week or of one before (one not come yet: none)."""
    monday = today - timedelta(days=today.weekday() + 7 * m.group("wk").count("上"))
    since = monday + timedelta(days=_WEEKDAYS[m.group("a")])
    until = monday + timedelta(days=_WEEKDAYS[m.group("b") or m.group("a")])
    return Period(since, min(until, today), m.span()) if since <= today else None


def _months_before(today: date, n: int) -> date:
    """The same day n months back (the month's last day when it has no such day)."""
    year, month = divmod(today.year * 12 + today.month - 1 - n, 12)
    return date(year, month + 1, min(today.day, _month_end(year, month + 1).day))


def _month_end(year: int, month: int) -> date:
    return (date(year, month, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def _filled(pattern: str) -> re.Pattern:
    """A date pattern with its pieces in: a month's name ("margarine" is none), a day, a month's number."""
    return re.compile(words.filled(pattern, words.DATES["pieces"]), re.I)


# offline_words.json "dates" by name (a whole month, from a day on, a due date…); the ranges in turn
_DATE = {name: _filled(pattern) for name, pattern in words.DATES.items() if isinstance(pattern, str)}
_RANGES = [_filled(p) for p in words.DATES["ranges"]]


def _month_number(said: str | None) -> int | None:
    value = (int(said) if said.isdigit() else number(said)) if said else None
    return int(value) if value and 1 <= value <= 12 else None


def _a_month(m: re.Match, text: str, today: date) -> Period | None:
    """A month said alone is that whole month, this year's unless it has not come yet."""
    month = _month_number(m.group("m")) or _month(m.group("en"))
    if month is None:
        return None
    last, end = month, m.end()
    to = _DATE["to_month"].match(text, m.end())  # 三月到五月, "from March to May": both and those between
    if to and (said := _month_number(to.group("m2")) or _month(to.group("en2"))) and said > month:
        last, end = said, to.end()
    year = int(m.group("y") or m.group("eny") or today.year)
    if m.group("rel") == "去年":
        year = today.year - 1
    elif not (m.group("y") or m.group("eny") or m.group("rel")) and month > today.month:
        year -= 1
    since, until = date(year, month, 1), _month_end(year, last)
    return Period(since, min(until, today) if until > today and since <= today else until, (m.start(), end))


def _open_period(m: re.Match, text: str, today: date) -> Period | None:
    month = _month_number(m.group("m") or m.group("m2")) or _month(m.group("en"))
    day = m.group("d") or m.group("ed") or m.group("end") or m.group("dm")
    day = _day(day) if day else 1
    if month is None:
        since = today.replace(day=1)
        if day > today.day or m.group("last"):  # 25号以后 said on the 10th: last month's 25th
            since = (since - timedelta(days=1)).replace(day=1)
    else:
        since = date(today.year if month <= today.month else today.year - 1, month, 1)
    try:
        since = since.replace(day=day)
    except ValueError:
        return None
    until = today - timedelta(days=1) if m.group("yday") or m.group("eyday") else today  # 从3号到昨天
    return Period(since, until, m.span())


def _quarter(m: re.Match, text: str, today: date) -> Period | None:
    """A quarter or a half year (三季度, Q1, 上季度, "this quarter", 去年上半年, H2): its months, this
    year's unless said or not come yet."""
    now, g = (today.month - 1) // 3, {k: v for k, v in m.groupdict().items() if v}
    half = g.get("h") or g.get("he") or g.get("hw")  # 上半年, H1, "first half": quarters one and two
    if said := g.get("q") or g.get("qe") or (half and ("1" if half[0] in "上1fF" else "3")):
        q = int(said) - 1 if said.isdigit() else "一二三四".index(said)
        said_year = g.get("y") or g.get("y_after")
        rel = (g.get("rel") or g.get("rel_after") or g.get("hwl") or "").lower()
        year = int(said_year or today.year) - rel.startswith(("去", "last"))
        year -= not (said_year or rel) and q > now
    else:
        q, year = now - (g.get("zh") or g["en"]).lower().startswith(("上", "last", "prev")), today.year
        q, year = (3, year - 1) if q < 0 else (q, year)
    last = _month_end(year, 3 * q + (6 if half else 3))
    return Period(date(year, 3 * q + 1, 1), min(last, today), m.span())


def _ten_days(m: re.Match, text: str, today: date) -> Period | None:
    """上旬, 中旬, 下旬 of a month (this one unless said): the 1st-10th, the 11th-20th, the 21st on; 上半月
    and 下半月, the 1st-15th and the 16th on."""
    halves, thirds = {"上": (1, 15), "下": (16, 0)}, {"上": (1, 10), "中": (11, 20), "下": (21, 0)}
    start, end = (halves if m.group("half") else thirds)[m.group("part") or m.group("half")]
    back = (today.month - (_month_number(m.group("m")) or today.month)) % 12 + bool(m.group("last"))
    first = _months_before(today.replace(day=1), back)
    since, until = first.replace(day=start), first.replace(day=end or _month_end(first.year, first.month).day)
    return Period(since, min(until, today), m.span()) if since <= today else None  # not come yet: none


# Each pattern's first match read by its reader, in this order (the first period found is the one said)
_READERS = [*((pattern, _date_range) for pattern in _RANGES), (_DATE["ten_days"], _ten_days),
            (_DATE["since_weekday"], _since_weekday), (_DATE["week_days"], _week_days),
            (_DATE["open"], _open_period), (_DATE["month"], _a_month), (_DATE["quarter"], _quarter)]  # fmt: skip


def period(text: str, today: date) -> Period | None:
    for pattern, read in _READERS:
        if (m := pattern.search(text)) and (found := read(m, text, today)):
            return found
    for said, month_day in words.NAMED_DAYS:  # 双十一那天, Christmas: the last one up to today; 双十一以来 on
        if m := re.search(words.filled(words.CALENDAR["named_day"], {"DAY": said}), text, re.I):
            day = date(today.year, *map(int, month_day.split("-")))
            day = day if day <= today else day.replace(year=today.year - 1)
            return Period(day, today if m.group(1) or m.group(2) else day, m.span())
    for pattern, kind in _PERIOD_RES:
        if not (m := pattern.search(text)):
            continue
        if kind in ("months", "days", "weeks"):
            n = number(next(g for g in m.groups() if g))
            if n is None or n < 1 or (kind == "months" and n > 24):
                continue
            if kind == "months":
                return Period(_months_before(today, int(n)), today, m.span())
            days = min(366, int(n) * (7 if kind == "weeks" else 1))
            return Period(today - timedelta(days=days - 1), today, m.span())
        monday, first = today - timedelta(days=today.weekday()), today.replace(day=1)
        day = timedelta(days=1)
        since, until = {
            "week7": (today - 6 * day, today), "month30": (today - 29 * day, today), "today": (today, today),
            "yesterday": (today - day, today - day), "day_before": (today - 2 * day, today - 2 * day),
            "three_days_ago": (today - 3 * day, today - 3 * day), "this_week": (monday, today),
            "last_week": (monday - 7 * day, monday - day), "week_before_last": (monday - 14 * day, monday - 8 * day),
            "this_month": (first, today), "last_month": ((first - day).replace(day=1), first - day),
            "month_before_last": (_months_before(first, 2), _months_before(first, 1) - day),
            "fortnight": (today - 13 * day, today), "this_year": (today.replace(month=1, day=1), today),
            "month_ago_day": (_months_before(today, 1), _months_before(today, 1)),
        }[kind]  # fmt: skip
        return Period(since, until, m.span())
    return None


_WEEKDAYS, _EN_WEEKDAYS = words.CALENDAR["weekdays_zh"], words.CALENDAR["weekdays_en"]  # Monday first


def _month_edge(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    """月底前, 本月底, 下个月初, 明年七月底前, 年底前, "by end of December", "end of next month": the month's
    (or the year's) end, start or middle."""
    for m in _DATE["due_month_edge"].finditer(text):
        g = {k: v for k, v in m.groupdict().items() if v}
        month = _month_number(m.group("m")) or _month(m.group("en"))
        unit = g.get("enu") or g.get("enu2") or ("year" if "yr" in g else "")
        rel = g.get("rel") or {"month": "下个月", "year": "明年"}.get(g.get("enu"), "")
        edge = g.get("edge") or words.CALENDAR["edges_en"].get(g.get("eedge", "").lower(), "初")  # "end of"
        if month is None and not rel and not unit and not re.search(r"月$", text[: m.start("edge")]):
            continue  # 底 of 低/底部 without a month: no date
        year = today.year + (1 if rel == "明年" else 0)
        if unit == "year" or (rel.endswith("年") and month is None):  # 年底, 明年底, "end of the year"
            month = {"初": 1, "中": 6}.get(edge[0], 12)
        elif month is None:
            month = today.month + (1 if rel.startswith("下") else 0)
            year, month = (year + 1, 1) if month == 13 else (year, month)
        elif not rel and month < today.month:
            year += 1
        day = {"底": 0, "末": 0, "初": 1}.get(edge, 15)
        found = _month_end(year, month) if day == 0 else date(year, month, day)
        return found, m.span()
    return None


def _near_day(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    """by 12/20, 下个月20号之前, 30号前到, "by the 5th", 明天就要, by tomorrow, 两周内: a date said by its day
    or as days ahead."""
    if m := _DATE["due_days_ahead"].search(text):
        return today + timedelta(days=2 if m.group("zh") == "后天" else 1), m.span()
    if m := _DATE["due_within"].search(text):  # 两周内, "within 10 days": that many days on
        n, unit = number(m.group("n") or m.group("ne")) or 1, (m.group("u") or m.group("ue")).lower()
        months = int(n) if unit[-1] in "月h" or unit.startswith("month") else 0
        days = 0 if months else int(n) * (7 if unit[-1] in "周期拜" or unit.startswith("week") else 1)
        return (_months_before(today, -months) if months else today + timedelta(days=days)), m.span()
    if m := _DATE["due_slash"].search(text):  # "by 12/20", 12/8前; 20/12: the day first
        month, day, year = int(m.group("m") or m.group("mz")), int(m.group("d") or m.group("dz")), today.year
        month, day = (day, month) if month > 12 else (month, day)
    elif m := _DATE["due_day"].search(text):
        day = int(m.group("d") or m.group("de"))
        later = (m.group("rel") or "").startswith("下") or day < today.day
        ahead = _months_before(today.replace(day=1), -later)
        year, month = ahead.year, ahead.month
    else:
        return None
    return (found, m.span()) if (found := _not_past(year, month, day, today)) else None


def _not_past(year: int, month: int, day: int, today: date, fixed: bool = False) -> date | None:
    """That day, a year on when it has passed and its year was not said; None when there is no such day."""
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    return found if fixed or found >= today else found.replace(year=year + 1)


def due_date(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    """A date something is needed by: 2026-12-05, 12月5日, 下周一, next Monday, by Dec 1, 明年七月底前."""
    if m := _DATE["due_en"].search(text):
        month, day = _month(m.group("m1") or m.group("m2")), _day(m.group("d1") or m.group("d2"))
        return (found, m.span()) if (found := _not_past(today.year, month, day, today)) else None
    if found := _month_edge(text, today) or _near_day(text, today):
        return found
    if m := _DATE["due_iso"].search(text) or _DATE["due_cn"].search(text):  # 2026-12-05, 12月5日
        year, month, day = int(m.group(1) or today.year), _day(m.group(2)), _day(m.group(3))
        return (found, m.span()) if (found := _not_past(year, month, day, today, bool(m.group(1)))) else None
    if m := _DATE["due_weekday_zh"].search(text):  # 下周三, 下下周三
        found = today + timedelta(days=_WEEKDAYS[m.group("day")] - today.weekday() + 7 * len(m.group("next")))
        return (found if found > today else found + timedelta(days=7)), m.span()
    if m := _DATE["due_weekday_en"].search(text):
        weekday = _EN_WEEKDAYS.index(m.group("day").lower())
        ahead = (weekday - today.weekday()) % 7 or 7
        ahead += 7 * ((m.group("said") or "").strip().lower() == "next" and today.weekday() < weekday)
        return today + timedelta(days=ahead), m.span()
    return None
