"""Turn rows gathered by other tools into a table people can paste: Markdown or CSV."""

from __future__ import annotations

import csv
import io
import re

from inventory_ai.errors import InvalidInput

MAX_ROWS = 200
# A spreadsheet reads a cell starting with one of these as a formula ("=HYPERLINK(…)", "@SUM(…)"):
# such a cell is written with a leading apostrophe, shown as text. A plain number ("-20") stays.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


def csv_safe(text: str) -> str:
    """A cell as every CSV the product writes has it: never read as a formula by a spreadsheet."""
    if text.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _columns(rows: list[dict]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    return columns


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        raise InvalidInput("report cells must be plain values (text or numbers), not lists or objects")
    return str(value)


def format_report(title: str, rows: list, fmt: str = "markdown") -> str:
    if fmt not in ("markdown", "csv"):
        raise InvalidInput(f"format must be markdown or csv, got {fmt!r}")
    if not rows:
        raise InvalidInput("rows is empty: gather data with another tool first")
    if not all(isinstance(r, dict) for r in rows):
        raise InvalidInput("each row must be an object of column: value")
    if len(rows) > MAX_ROWS:
        raise InvalidInput(f"at most {MAX_ROWS} rows per report, got {len(rows)}")
    columns = _columns(rows)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([csv_safe(_cell(c)) for c in columns])
        for row in rows:
            writer.writerow([csv_safe(_cell(row.get(c))) for c in columns])
        return buffer.getvalue()

    def md(value) -> str:
        return _cell(value).replace("|", "\\|").replace("\n", " ")

    lines = [f"### {md(title)}", "", "| " + " | ".join(md(c) for c in columns) + " |"]
    lines.append("|" + "|".join(" --- " for _ in columns) + "|")
    lines += ["| " + " | ".join(md(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
