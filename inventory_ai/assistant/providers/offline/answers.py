"""The offline provider's answers: a short sentence plus the rows that matter, in the user's language.

Every figure here is read from a tool result; nothing is made up.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.replies import said as _t  # the words are data
from inventory_ai.services.ledger import MOVEMENT_WORDS
from inventory_ai.services.shown import figure as f  # 1,200 kg; 6,200.00: as a person reads figures
from inventory_ai.text import CJK_RUN


def compose_answer(language: str, text: str, results: list[dict], names: Callable[[str], str] = str) -> str:
    """The answer from this turn's results. `names` turns a Chinese warehouse, category or supplier
    name into the reader's language (English answers use English names throughout)."""
    zh = language == "zh"
    say = str if zh else names  # a name as the reader reads it: the writers below call it for every place
    parts = [_answer_one(zh, r, say) for r in results]
    # When a report was made, the report is the answer; the data it came from was shown already.
    report = [
        p for r, p in zip(results, parts, strict=True) if r["name"] == "format_report" and not r["error"]
    ]
    return report[-1] if report else "\n\n".join(p for p in parts if p)


def _answer_one(zh: bool, result: dict, say: Callable[[str], str]) -> str:
    if result["error"]:
        message = result["error"].get("message", "")
        kind = result["error"].get("type")
        if kind == "Declined":
            return _t(zh, "declined")
        if kind == "PermissionDenied" and result["error"].get("message_zh"):  # a warehouse not theirs
            return result["error"]["message_zh"] if zh else message[:1].upper() + message[1:] + "."
        # What went wrong, by its type; in Chinese unless worded for the reader (a stock check is)
        if zh and not CJK_RUN.search(message):
            message = words.ERRORS_ZH.get(kind, words.ERRORS_ZH["_other"])
        return _t(zh, "not_done", message=message)
    writer = _WRITERS.get(result["name"])
    return writer(zh, result["arguments"], result["data"], say) if writer else ""


def _search(zh, args, data, say):
    """One line: how many, and the best match. The rows are the result (the page's table)."""
    rows, keyword = data.get("materials", []), args.get("keyword", "")
    if not keyword:  # what a warehouse or category holds
        where = " / ".join(say(x) for x in (args.get("warehouse"), args.get("category")) if x)
        names = ("、" if zh else ", ").join(r["name" if zh else "name_en"] for r in rows[:5])
        return _t(
            zh, "held" if rows else "held_none", where=where, total=data.get("total", len(rows)), names=names
        )
    if not rows:
        return _t(zh, "search_none", keyword=keyword)
    best, total = rows[0], data["total"]
    return _t(zh, "search_one" if total == 1 else "search_many", keyword=keyword, total=total,
              name=best["name" if zh else "name_en"], code=best["code"], stock=best["stock"], unit=best["unit"])  # fmt: skip


def _detail(zh, args, data, say):
    supplier = say(data["supplier"]) if data.get("supplier") else "-"
    text, also = data.get("description"), ", ".join((data.get("synonyms") or [])[:6])
    # the description holds the Chinese line before " / " and the English after
    described = _t(zh, "what_it_is", text=text.split(" / ")[0 if zh else -1]) if text else ""
    return _t(
        zh, "detail", name=data["name"] if zh else data["name_en"], code=data["code"], name_en=data["name_en"],
        stock=f(data["stock"]), unit=data["unit"], flag=_t(zh, "below") if data.get("below_reorder_point") else "",
        warehouses=", ".join(f"{say(w)} {f(q)}" for w, q in data.get("warehouses", {}).items()) or "-",
        spec=(data.get("spec") if zh else data.get("spec_en") or data.get("spec")) or "-",
        category=say(data["category"]), supplier=supplier,
        cost=f(data["unit_cost_cny"]), reorder=f(data["reorder_point"]),
    ) + described + (_t(zh, "also_called", also=also) if also else "")  # fmt: skip


def _stats(zh, args, data, say):
    lines = [
        _t(zh, "stats_row", warehouse=say(r["warehouse"]), materials=r["materials"], value=f(r["value_cny"]))
        for r in data.get("by_warehouse", [])
    ]  # fmt: skip
    head = _t(zh, "stats", materials=data["materials_in_stock"], value=f(data["total_value_cny"]),
              below=data["below_reorder_point"])  # fmt: skip
    return head + ("\n" + "\n".join(lines) if lines else "")


def _low(zh, args, data, say):
    """One line: how many, and the most urgent. The rows are the result (the page's table)."""
    if not (items := data.get("items", [])):
        return _t(zh, "low_none")
    first = items[0]
    return _t(zh, "low", total=data["total"], name=first["name" if zh else "name_en"], code=first["code"],
              quantity=f(first["quantity"]), unit=first["unit"])  # fmt: skip


def _movements(zh, args, data, say):
    if not (rows := data.get("movements", [])):
        return _t(zh, "movements_none")
    latest, verb = rows[0], MOVEMENT_WORDS[rows[0]["type"]]
    return _t(
        zh, "movements", total=data["total"], qin=f(data["quantity_in"]), qout=f(data["quantity_out"]),
        date=latest["date"], name=latest["name"] if zh else latest.get("name_en") or latest["name"],
        code=latest["code"], verb=verb.zh if zh else verb.en, quantity=f(latest["quantity"].lstrip("-")),
        unit=latest["unit"], warehouse=latest["warehouse"] if zh else latest.get("warehouse_en") or say(latest["warehouse"]),
    )  # fmt: skip


def _booking(zh, args, data, say):
    verb, unit = MOVEMENT_WORDS[data["movement_type"]], data["unit"]
    text = _t(
        zh, "booked", verb=verb.zh if zh else verb.en_done, quantity=f(data["quantity"]), unit=unit,
        material=data["material"] if zh else data.get("material_en") or data["material"],
        warehouse=say(data["warehouse"]),
        before=f(data["level_before"]), after=f(data["level_after"]),
    )  # fmt: skip
    if to := data.get("to_warehouse"):
        text += _t(zh, "booked_to", warehouse=say(to), after=f(data["to_level_after"]), unit=unit)
    return text


def _purchase(zh, args, data, say):
    due = _t(zh, "needed_by", date=data["needed_by"]) if data.get("needed_by") else ""
    return _t(zh, "purchase", id=data["purchase_request_id"], material=data["material"],
              quantity=f(data["quantity"]), unit=data["unit"], due=due)  # fmt: skip


def _report(zh, args, data, say):
    """The table itself is in the result (the page draws it); the answer says what it is."""
    rows = max(0, len([line for line in data.get("report", "").splitlines() if line.startswith("|")]) - 2)
    if data.get("format") == "csv":
        rows = max(0, len(data.get("report", "").splitlines()) - 1)
    return _t(zh, "report", title=args.get("title", ""), rows=rows)


def _intent(zh, args, data, say):
    keywords = ", ".join(data.get("keywords", []))
    return _t(zh, "intent", name=data["name"], keywords=keywords, tool=data["tool_name"])


_WRITERS = {
    "search_materials": _search, "get_material_detail": _detail, "get_inventory_stats": _stats,
    "list_low_stock": _low, "get_stock_movements": _movements, "record_stock_movement": _booking,
    "create_purchase_request": _purchase, "format_report": _report, "create_new_intent": _intent,
}  # fmt: skip
