"""Audit events: who did what, with arguments stripped of anything secret."""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai import tracing
from inventory_ai.database import insert_rows
from inventory_ai.logging import scrub
from inventory_ai.models import AuditEvent
from inventory_ai.statements import Direct
from inventory_ai.text import storable

_SECRET_KEYS = {"password", "token", "api_key", "secret", "authorization"}


def sanitise(arguments: Any, depth: int = 0) -> Any:
    if depth > 4:
        return "…"
    if isinstance(arguments, dict):
        return {
            storable(str(k)[:64]): (
                "[redacted]" if str(k).lower() in _SECRET_KEYS else sanitise(v, depth + 1)
            )
            for k, v in list(arguments.items())[:30]
        }
    if isinstance(arguments, list):
        return [sanitise(v, depth + 1) for v in arguments[:30]]
    if isinstance(arguments, str):
        return storable(scrub(arguments[:500]))
    if isinstance(arguments, (int, float, bool)) or arguments is None:
        return arguments
    return storable(scrub(str(arguments)[:500]))


def event(action: str, status: str, **fields: Any) -> dict:
    """One audit event's row, its arguments sanitised, not yet written (`write`)."""
    if "arguments" in fields and fields["arguments"] is not None:
        fields["arguments"] = sanitise(fields["arguments"])
    fields.setdefault("request_id", structlog.contextvars.get_contextvars().get("request_id"))
    if "trace_id" not in fields:  # the span it happened in, when traces are on (tracing.py)
        fields["trace_id"], fields["span_id"] = tracing.ids()
    return {"action": action, "status": status, **fields}


def write(where: Session | Direct, events: list[dict]) -> None:
    """Audit events, written at once in the session's transaction or a direct one (a Core insert:
    the loop writes one per call, and nothing reads them back there)."""
    if events:
        insert_rows(where, AuditEvent, events)


def record(session: Session, action: str, status: str, **fields: Any) -> None:
    """One audit event, written at once in the session's transaction."""
    write(session, [event(action, status, **fields)])


def traces_of(
    session: Session, conversation_id: str, message_id: str, limit: int = 8
) -> list[tuple[str, str]]:
    """The spans that wrote an answer's audit events, the first of each trace, oldest first: the
    answer's run and the decisions on it, which a new decision on it links to (answer_spans.decision)."""
    rows = session.execute(
        select(AuditEvent.trace_id, AuditEvent.span_id)
        .where(
            AuditEvent.conversation_id == conversation_id,
            AuditEvent.message_id == message_id,
            AuditEvent.trace_id.is_not(None),
        )
        .order_by(AuditEvent.id)
    ).all()
    first: dict[str, str] = {}
    for trace_hex, span_hex in rows:
        first.setdefault(trace_hex, span_hex)
    return list(first.items())[:limit]
