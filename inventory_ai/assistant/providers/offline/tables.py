"""A table of what the user typed: "make a csv: butter 4 cases, cream 6 cases, eggs 80kg",
"帮我把这个整理成CSV：高筋面粉 500kg 6.2元；低筋面粉 300kg 5.8元". The rows are in the request, not
in the stock, so format_report is called with them at once; nothing is looked up and nothing is
invented.
"""

from __future__ import annotations

import re

from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.numbers import CN_NUMBER, DIGITS
from inventory_ai.assistant.providers.offline.reading import Plan, Reading, direction

# Where one typed row ends: ; , 、 or a line break, a full stop or question mark and a space; never
# the comma of 1,200 or the point of 2.5.
_ROW_END = r"[;；、\n|]|\s/\s|[,，](?!\d{3})|(?<!\d)[.。?？!！](?!\d)"
_NUMBER = re.compile(rf"(?<![A-Za-z])(?:{DIGITS})|{CN_NUMBER}(?=\s*(?:{words.TABLE_FIGURE}))")
_TITLE = re.compile(words.TABLE_TITLE, re.I)  # the table's title, not a row (offline_words.json)


def typed_rows(text: str, r: Reading) -> list[dict] | None:
    """The rows a request types out to be tabled (two or more), or None."""
    rest = slot.blank(text, [r.slots.period.span] if r.slots.period else [])
    rest = _TITLE.sub(" ", rest)
    zh = (r.zh or not re.search(r"[A-Za-z]{3}", rest)) and not re.search(r"[;；,，、]", rest)
    pieces = re.split(_ROW_END + (r"|\s+" if zh else ""), rest)
    rows = []
    for piece in (p.strip() for p in pieces):
        number = _NUMBER.search(slot.blank(piece, [m.span() for m in slot.CODE.finditer(piece)]))
        if not number:
            continue
        item = piece[: number.start()].strip(" -:：")
        if re.search(words.TABLE_ASKED, item, re.I):  # "make a csv: butter", "put in a table - bread flour"
            item = re.split(words.TABLE_WORD, item, flags=re.I)[-1].strip(" -:：")
        if len(item) < 2 or re.search(words.REPORT, item, re.I):
            continue
        what, amount = ("项目", "数量") if r.zh else ("item", "amount")
        rows.append({what: item, amount: piece[number.start() :].strip()})
    return rows if len(rows) >= 2 else None


def table(text: str, r: Reading, offered: set[str]) -> Plan | None:
    """format_report of the typed rows, when a table, a CSV or a spreadsheet of them is asked."""
    if "format_report" not in offered or not re.search(words.TABLE_ASKED, text, re.I):
        return None
    untitled = _TITLE.sub(" ", text)
    if direction(untitled) or re.search(words.BOOKING_LIST, untitled, re.I):
        return None  # 领料清单, 到货清单…请入库, "table: … book them in": a booking, not a table
    rows = typed_rows(text, r)
    if rows is None:
        return None
    title = _TITLE.search(text)
    named = (title.group(1) or title.group("bare")) if title else ("表格" if r.zh else "Table")
    kind = "csv" if re.search(words.AS_CSV, text, re.I) else "markdown"
    return Plan("format_report", {"title": named, "rows": rows, "format": kind})
