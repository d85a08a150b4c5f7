"""Result tables for people: the rows a tool returned, in columns a warehouse reads, in the reader's
language; and a report (format_report's Markdown or CSV) as the table it describes."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from inventory_ai import strict_json
from inventory_ai.services import shown
from inventory_ai.web.markup import markdown_table

# (field in the result row, column label key in web/i18n.py), per list a tool returns.
TABLE_COLUMNS = {
    "materials": [
        ("code", "code"),
        ("name", "name"),
        ("stock", "quantity"),
        ("unit", "unit"),
        ("warehouse", "warehouse"),
    ],
    "items": [
        ("code", "code"),
        ("name", "name"),
        ("quantity", "quantity"),
        ("reorder_point", "reorder_point"),
        ("unit", "unit"),
    ],
    "movements": [
        ("date", "date"),
        ("code", "code"),
        ("name", "name"),
        ("type", "type"),
        ("quantity", "quantity"),
        ("unit", "unit"),
        ("warehouse", "warehouse"),
    ],
}
# Columns that hold figures: shown with thousands separators (1,200; 6,200.00).
FIGURES = frozenset(
    {"stock", "quantity", "reorder_point", "shortfall", "value_cny", "level_after", "level_before",
     "materials", "quantity_in", "quantity_out", "unit_cost_cny", "total_value_cny"}
)  # fmt: skip
# Tools whose lists stop at a limit (at most this many rows a call): "show all" asks again with it.
PAGED_TOOLS = {"search_materials": 50, "list_low_stock": 50, "get_stock_movements": 50}


@dataclass
class ResultTable:
    columns: list[str]  # headers, as shown
    rows: list[list[str]]
    total: int | str | None = None  # how many there are (the tool's count), when it says
    more: bool = False  # the tool has rows it did not return
    title: str | None = None  # a report's title


def parsed(content: str | None):
    """Stored JSON (a result, or arguments as the model sent them), or None when it is not JSON this
    product reads (strict_json.py: no absurd nesting or numbers of thousands of digits)."""
    try:
        return strict_json.loads(content or "")
    except strict_json.Unreadable:
        return None


def row_count(data) -> int | str | None:
    """How many rows a result speaks of (its total, else the rows it has), for the tool chip."""
    if isinstance(data, dict):
        for key in TABLE_COLUMNS:
            if isinstance(data.get(key), list):
                return data.get("total", len(data[key]))
    return None


class Cells:
    """One row's cells in the reader's language: English names for an English page, the ledger's
    movement words, a material held in several warehouses listed with its share in each."""

    def __init__(self, lang: str, t: dict[str, str], places: dict[str, str]):
        self.lang, self.t, self.places = lang, t, places

    def place(self, name) -> str:
        return self.places.get(name, name) if isinstance(name, str) else ""

    def cell(self, row: dict, field: str) -> str:
        english = self.lang == "en"
        if field == "name" and english:
            return str(row.get("name_en") or row.get("name") or "")
        if field == "warehouse":
            if english and row.get("warehouse_en"):
                return str(row["warehouse_en"])
            if row.get("warehouse"):
                return self.place(row["warehouse"])
            shares = row.get("warehouses") or {}
            return ("，" if not english else ", ").join(
                f"{self.place(w)} {shown.figure(q)}" for w, q in shares.items()
            )
        if field == "type":
            return self.t.get(f"movement.{row.get('type')}", str(row.get("type") or ""))
        value = row.get(field)
        if value is None:
            return ""
        return shown.figure(value) if field in FIGURES else str(value)


def rows_table(rows: list[dict], columns: list[tuple[str, str]], cells: Cells) -> ResultTable:
    return ResultTable(
        columns=[cells.t[label] for _field, label in columns],
        rows=[[cells.cell(row, field) for field, _label in columns] for row in rows],
    )


def result_table(data, cells: Cells) -> ResultTable | None:
    """The table of a tool result with rows, else None."""
    if not isinstance(data, dict):
        return None
    for key, columns in TABLE_COLUMNS.items():
        rows = data.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            table = rows_table(rows, columns, cells)
            table.total, table.more = data.get("total"), bool(data.get("more_available"))
            return table
    return None


def report_table(data, cells: Cells) -> ResultTable | None:
    """format_report's result ({"format", "report"}) as the table it holds."""
    if not isinstance(data, dict) or not isinstance(data.get("report"), str):
        return None
    text, title = data["report"], None
    if data.get("format") == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            return None
        header, body = rows[0], rows[1:]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        if lines and lines[0].startswith("#"):
            title, lines = lines[0].lstrip("#").strip(), lines[1:]
        found = markdown_table(lines)
        if found is None:
            return None
        header, body = found
    localised = [
        [_report_cell(cells, key, value) for key, value in zip(header, row, strict=False)] for row in body
    ]
    return ResultTable(columns=[cells.t.get(key, key) for key in header], rows=localised, title=title)


def _report_cell(cells: Cells, key: str, value: str) -> str:
    if key == "type":
        return cells.t.get(f"movement.{value}", value)
    if key in ("warehouse", "category"):
        return cells.place(value)
    return shown.figure(value) if key in FIGURES else value
