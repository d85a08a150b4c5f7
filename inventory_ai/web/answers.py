"""One stored answer as the page shows it (templates/_answer.html): its tool calls as chips, result
tables and charts, the reply as text people read, notes on how it ended, and the cards of bookings
that wait for the user.

The page draws an answer from here both when a conversation is loaded and when a live answer ends
(static/chat.js swaps its streamed view for this), so the two look the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from flask import current_app, url_for
from markupsafe import Markup
from sqlalchemy import select

from inventory_ai.assistant import effects
from inventory_ai.assistant.extension import manager
from inventory_ai.auth import authenticated_user
from inventory_ai.extensions import db
from inventory_ai.models import CallStatus, ChatMessage, Material, MessageStatus, ToolCallRecord
from inventory_ai.services import clock
from inventory_ai.services.stats import stock_history
from inventory_ai.services.units import fmt_quantity
from inventory_ai.web import charts
from inventory_ai.web.i18n import place_names
from inventory_ai.web.markup import render
from inventory_ai.web.tables import (
    PAGED_TOOLS,
    Cells,
    ResultTable,
    parsed,
    report_table,
    result_table,
    row_count,
)

CHART_DAYS = 90


@dataclass
class Chip:
    status: str  # success | error | declined | waiting
    text: str


@dataclass
class Card:
    """A booking waiting for the user: approve (the quantity may be changed) or reject, with a reason."""

    tool_call_id: str
    description: str
    quantity: str | None = None  # as the call asked, when it has one to change
    unit: str = ""
    effect: dict | None = None  # what it would do to the stock if approved now (templates/_effect.html)


@dataclass
class AnswerView:
    message_id: str
    status: str
    chips: list[Chip] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # each call as the model made it, for the curious
    tables: list[tuple[ResultTable, str | None]] = field(default_factory=list)  # (table, "show all" link)
    charts: list[tuple[str, Markup]] = field(default_factory=list)  # (caption, drawing)
    reply: Markup = field(default_factory=Markup)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    cards: list[Card] = field(default_factory=list)


def primary_model() -> str:
    """The model that answers when all is well (INVENTORY_AI_LLM_PROVIDER / _MODEL)."""
    config = current_app.extensions["inventory_ai.config"]
    return config.llm_model if config.llm_provider == "dashscope" else "offline"


def answer_view(message: ChatMessage, lang: str, t: dict[str, str]) -> AnswerView:
    view = AnswerView(message.id, message.status, reply=render(message.content))
    cells = Cells(lang, t, place_names(lang))
    charted: list[str] = []
    effects_now = effects.of_answer(manager().registry, db.session, db.engine, authenticated_user(), message)
    reports: list[tuple[ResultTable, str | None]] = []
    lists: list[tuple[ResultTable, str | None]] = []
    for stored in message.rounds:
        for call in stored.calls:
            view.calls.append(f"{t.get('tool.' + call.name, call.name)}: {call.arguments}")
            if call.status == CallStatus.PENDING_CONFIRMATION:
                view.cards.append(_card(call, effects_now.get(call.call_id)))
                continue
            data = parsed(call.content)
            view.chips.append(_chip(call, data, t))
            if call.status == CallStatus.SUCCESS:
                drawn = _drawn_table(call, data, cells)
                if drawn is not None:
                    (reports if call.name == "format_report" else lists).append(drawn)
                charted += [c for c in _charted_materials(call.name, data) if c not in charted]
            view.notes += _decision_notes(call, data, lang, t)
    # A report is the answer: the lists it was made from stay behind their chips, not drawn twice.
    view.tables = reports or lists
    for code in charted[:2]:
        chart = _stock_chart(code, message, lang, t)
        if chart is not None:
            view.charts.append(chart)
    view.notes += _ending_notes(message, t)
    return view


def _chip(call: ToolCallRecord, data, t: dict[str, str]) -> Chip:
    label = t.get(f"tool.{call.name}", call.name)
    if call.status == CallStatus.SUCCESS:
        count = row_count(data)
        return Chip("success", f"✓ {label}" + (f" · {count} {t['results']}" if count is not None else ""))
    if call.status == CallStatus.DECLINED:
        return Chip("declined", f"✗ {label} · {t['declined']}")
    if call.status == CallStatus.AWAITING_SIGNOFF:
        return Chip("waiting", f"… {label} · {t['waiting_signoff']}")
    return Chip("error", f"✗ {label} · {t['failed']}")


def _drawn_table(call: ToolCallRecord, data, cells: Cells) -> tuple[ResultTable, str | None] | None:
    """A result as a table, with a "show all" link when the tool had more rows than it gave."""
    if call.name == "format_report":
        table = report_table(data, cells)
        return (table, None) if table is not None else None
    table = result_table(data, cells)
    if table is None:
        return None
    more = None
    if table.more and call.name in PAGED_TOOLS:
        more = url_for("web.all_rows", tool_call_id=call.call_id)
    return table, more


def _charted_materials(tool: str, data) -> list[str]:
    """The material a detail or a one-material movement list is about: its stock over time helps."""
    if not isinstance(data, dict):
        return []
    if tool == "get_material_detail" and data.get("code"):
        return [data["code"]]
    if tool == "get_stock_movements":
        codes = {row.get("code") for row in data.get("movements") or [] if isinstance(row, dict)}
        if len(codes) == 1 and None not in codes:
            return list(codes)
    return []


def _stock_chart(code: str, message: ChatMessage, lang: str, t: dict[str, str]) -> tuple[str, Markup] | None:
    """(caption, drawing) of a material's stock over the days before the answer."""
    material = db.session.scalar(select(Material).where(Material.code == code))
    if material is None:
        return None
    end = message.created_at  # what was true when the answer was written, on every reload
    points = stock_history(db.session, material.id, end - timedelta(days=CHART_DAYS), end)
    name = material.name_zh if lang == "zh" else material.name_en
    label = t["stock_over_time"].format(name=name, code=code, days=CHART_DAYS, unit=material.unit)
    described = t["stock_from_to"].format(
        first=fmt_quantity(points[0][1]), last=fmt_quantity(points[-1][1]), unit=material.unit
    )
    reorder = (material.reorder_point, t["reorder_point"]) if material.reorder_point else None
    days = tuple(_plant_day(when) for when in (points[0][0], points[-1][0]))
    return label, charts.stock_line(points, reorder, days, label, described)


def _plant_day(moment: datetime) -> str:
    return moment.replace(tzinfo=UTC).astimezone(clock.PLANT).strftime("%m-%d")


def _card(call: ToolCallRecord, effect: dict | None) -> Card:
    arguments = parsed(call.arguments)
    arguments = arguments if isinstance(arguments, dict) else {}
    card = Card(call.call_id, call.description or call.name, effect=effect)
    quantity = arguments.get("quantity")
    if isinstance(quantity, int | float) and not isinstance(quantity, bool):
        card.quantity = fmt_quantity(Decimal(str(quantity)))
        card.unit = str(arguments.get("unit") or _unit_of(arguments.get("material")))
    return card


def _unit_of(material) -> str:
    if not isinstance(material, str):
        return ""
    found = db.session.scalar(
        select(Material.unit).where((Material.code == material) | (Material.name_zh == material))
    )
    return found or ""


def _decision_notes(call: ToolCallRecord, data, lang: str, t: dict[str, str]) -> list[tuple[str, str]]:
    """What the person decided beyond yes or no: a changed booking, a reason."""
    notes = []
    changes = data.get("approved_with_changes") if isinstance(data, dict) else None
    if isinstance(changes, dict) and changes:
        words = ("，" if lang == "zh" else ", ").join(
            f"{t.get(key, key)} {_shown(change.get('from'))} → {_shown(change.get('to'))}"
            for key, change in changes.items()
            if isinstance(change, dict)
        )
        notes.append(("changed", t["changed"].format(changes=words)))
    if call.decision_reason:
        key = "rejected_because" if call.status == CallStatus.DECLINED else "approved_because"
        notes.append(("reason", t[key].format(reason=call.decision_reason)))
    return notes


def _shown(value) -> str:
    try:
        return fmt_quantity(Decimal(str(value))) if isinstance(value, int | float) else str(value)
    except InvalidOperation:
        return str(value)


def _ending_notes(message: ChatMessage, t: dict[str, str]) -> list[tuple[str, str]]:
    status = message.status
    if status == MessageStatus.CANCELLED:
        return [("stopped", t["stopped"])]
    if status == MessageStatus.RUNNING:
        return [("running", t["still_running"])]
    if status == MessageStatus.AWAITING_SIGNOFF:
        return [("signoff", t["signoff_note"])]
    primary = primary_model()
    if message.model and message.model != primary:
        return [("model", t["model_note"].format(used=message.model, configured=primary))]
    return []
