"""Audit events: who did what, with arguments stripped of anything secret."""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.orm import Session

from inventory_ai.logging import scrub
from inventory_ai.models import AuditEvent

_SECRET_KEYS = {"password", "token", "api_key", "secret", "authorization"}


def sanitise(arguments: Any, depth: int = 0) -> Any:
    if depth > 4:
        return "…"
    if isinstance(arguments, dict):
        return {
            str(k)[:64].replace("\x00", "\ufffd"): (
                "[redacted]" if str(k).lower() in _SECRET_KEYS else sanitise(v, depth + 1)
            )
            for k, v in list(arguments.items())[:30]
        }
    if isinstance(arguments, list):
        return [sanitise(v, depth + 1) for v in arguments[:30]]
    if isinstance(arguments, str):
        return scrub(arguments[:500]).replace("\x00", "\ufffd")
    if isinstance(arguments, (int, float, bool)) or arguments is None:
        return arguments
    return scrub(str(arguments)[:500])


def record(session: Session, action: str, status: str, **fields: Any) -> AuditEvent:
    if "arguments" in fields and fields["arguments"] is not None:
        fields["arguments"] = sanitise(fields["arguments"])
    fields.setdefault("request_id", structlog.contextvars.get_contextvars().get("request_id"))
    event = AuditEvent(action=action, status=status, **fields)
    session.add(event)
    return event
