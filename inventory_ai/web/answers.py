"""One stored answer as the page shows it (templates/_answer.html): its tool calls as chips, result
tables and charts, the reply as text people read, notes on how it ended, and the cards of bookings
that wait for the user.

The page draws an answer from here both when a conversation is loaded and when a live answer ends
(static/chat.js swaps its streamed view for this), so the two look the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from flask import current_app, url_for
from markupsafe import Markup
from sqlalchemy import func, select

from inventory_ai.assistant import effects
from inventory_ai.assistant.described import described
from inventory_ai.assistant.extension import manager
from inventory_ai.auth import authenticated_user
from inventory_ai.extensions import db
from inventory_ai.models import CallStatus, ChatMessage, Material, MessageStatus, ToolCallRecord
from inventory_ai.services import approvals, clock, shown, sites
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

CHART_DAYS = 90  # a material's detail: its last three months


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
    conversation_id: str = ""
    conversation_title: str = ""
    lang: str | None = None  # the reply's `lang` when it is not in the page's language
    # A failed or stopped answer that is its conversation's latest: the question, to ask it again.
    retry_question: str | None = None


def primary_model() -> str:
    """The model that answers when all is well (INVENTORY_AI_LLM_PROVIDER / _MODEL)."""
    config = current_app.extensions["inventory_ai.config"]
    return config.llm_model if config.llm_provider == "dashscope" else "offline"


def answer_view(message: ChatMessage, lang: str, t: dict[str, str]) -> AnswerView:
    view = AnswerView(message.id, message.status, reply=render(message.content))
    cells = Cells(lang, t, place_names(lang))
    charted: dict[str, tuple[str, object]] = {}  # material code -> (tool, arguments) that showed it
    effects_now = effects.of_answer(manager().registry, db.session, db.engine, authenticated_user(), message)
    reports: list[tuple[ResultTable, str | None]] = []
    lists: list[tuple[ResultTable, str | None]] = []
    for stored in message.rounds:
        for call in stored.calls:
            view.calls.append(f"{t.get('tool.' + call.name, call.name)}: {call.arguments}")
            if call.status == CallStatus.PENDING_CONFIRMATION:
                view.cards.append(_card(call, lang, effects_now.get(call.call_id)))
                continue
            data = parsed(call.content)
            view.chips.append(_chip(call, data, t))
            if call.status == CallStatus.SUCCESS:
                drawn = _drawn_table(call, data, cells)
                if drawn is not None:
                    (reports if call.name == "format_report" else lists).append(drawn)
                for code in _charted_materials(call.name, data):
                    charted.setdefault(code, (call.name, parsed(call.approved_arguments or call.arguments)))
            view.notes += _decision_notes(call, data, lang, t)
    view.notes += _signoff_notes(message, t)
    # A report is the answer: the lists it was made from stay behind their chips, not drawn twice.
    view.tables = reports or lists
    for code, (tool, arguments) in list(charted.items())[:2]:
        chart = _stock_chart(code, _period(tool, arguments, message), message, lang, t)
        if chart is not None:
            view.charts.append(chart)
    view.notes += _ending_notes(message, t)
    view.conversation_id = message.conversation_id
    view.conversation_title = message.conversation.title
    if message.language in ("zh", "en") and message.language != lang:
        view.lang = "zh-CN" if message.language == "zh" else "en"
    if message.status in (MessageStatus.FAILED, MessageStatus.CANCELLED):
        view.retry_question = _question_to_retry(message)
    return view


def _question_to_retry(message: ChatMessage) -> str | None:
    """The question this answer answered, when nothing was said after it in its conversation."""
    latest = db.session.scalar(
        select(func.max(ChatMessage.created_seq)).where(
            ChatMessage.conversation_id == message.conversation_id
        )
    )
    if latest != message.created_seq:
        return None
    return db.session.scalar(
        select(ChatMessage.content)
        .where(
            ChatMessage.conversation_id == message.conversation_id,
            ChatMessage.created_seq < message.created_seq,
            ChatMessage.role == "user",
        )
        .order_by(ChatMessage.created_seq.desc())
        .limit(1)
    )


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


def _period(tool: str, arguments, message: ChatMessage) -> tuple[date, date]:
    """The plant days a chart shows: for a movement list, the days it listed (`since`/`until`, else
    its last `days`, 30 unless asked: the tool's own default); for a material's detail, the
    CHART_DAYS before the answer. Never past the day the answer was written."""
    arguments = arguments if isinstance(arguments, dict) else {}
    written = shown.plant_day(message.created_at)
    if tool != "get_stock_movements":
        return written - timedelta(days=CHART_DAYS - 1), written
    try:
        since = date.fromisoformat(arguments["since"]) if arguments.get("since") else None
        until = date.fromisoformat(arguments["until"]) if arguments.get("until") else None
    except (TypeError, ValueError):
        since = until = None
    until = min(until or written, written)
    days = arguments.get("days")
    if not isinstance(days, int) or isinstance(days, bool) or not 0 < days <= 366:
        days = 30
    since = since or until - timedelta(days=days - 1)
    return min(since, until), until


def _stock_chart(
    code: str, period: tuple[date, date], message: ChatMessage, lang: str, t: dict[str, str]
) -> tuple[str, Markup] | None:
    """(caption, drawing) of a material's stock over the plant days of `period`, up to the answer;
    the caption names the period."""
    material = db.session.scalar(select(Material).where(Material.code == code))
    if material is None:
        return None
    first_day, last_day = period
    start = clock.day_start_utc(first_day)
    end = min(clock.day_end_utc(last_day), message.created_at)  # what was true when it was written
    mine = sites.of_user(db.session, message.conversation.user_id)
    points = stock_history(db.session, material.id, start, end, sites=mine)
    name = material.name_zh if lang == "zh" else material.name_en
    label = t["stock_over_time"].format(
        name=name,
        code=code,
        days=(last_day - first_day).days + 1,
        first=shown.when(first_day, "day"),
        last=shown.when(last_day, "day"),
        unit=material.unit,
    )
    described = t["stock_from_to"].format(
        first=shown.number(points[0][1]), last=shown.number(points[-1][1]), unit=material.unit
    )
    reorder = (material.reorder_point, t["reorder_point"]) if material.reorder_point else None
    days = tuple(shown.when(when, "month_day") for when in (points[0][0], points[-1][0]))
    return label, charts.stock_line(points, reorder, days, label, described)


def _card(call: ToolCallRecord, lang: str, effect: dict | None) -> Card:
    arguments = parsed(call.arguments)
    arguments = arguments if isinstance(arguments, dict) else {}
    card = Card(call.call_id, described(manager().registry, db.session, call, lang), effect=effect)
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


def _signoff_notes(message: ChatMessage, t: dict[str, str]) -> list[tuple[str, str]]:
    """Who decided a booking's sign-off, when (the plant's clock), and why: on the answer it
    belongs to, where the requester reads the outcome."""
    notes = []
    for outcome in approvals.outcomes(db.session, message):
        decision = outcome["decision"]
        if decision == "waiting":
            continue
        at = shown.when(datetime.fromisoformat(outcome["at"])) if outcome["at"] else ""
        text = t[f"signoff_{decision}"].format(by=outcome["by"] or "", at=at)
        if outcome["reason"]:
            text += t["signoff_reason"].format(reason=outcome["reason"])
        notes.append((f"signoff-outcome {decision}", text))
    return notes


def _shown(value) -> str:
    try:
        return shown.number(value) if isinstance(value, int | float) else str(value)
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
