"""What admins change at run time (tool switches, intents) and what everyone leaves behind (audit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from inventory_ai.extensions import db
from inventory_ai.models.base import utcnow


class ToolSetting(db.Model):
    """An admin override of a tool's code defaults; null means 'as the code says'."""

    __tablename__ = "tool_settings"

    tool_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    enabled: Mapped[bool | None]
    allowed_roles: Mapped[list[str] | None] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    updated_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class Intent(db.Model):
    """A routing rule for the offline provider: keywords that mean 'call this tool'."""

    __tablename__ = "intents"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    keywords: Mapped[list[str]] = mapped_column(JSON)
    tool_name: Mapped[str] = mapped_column(String(64))
    default_arguments: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    priority: Mapped[int] = mapped_column(default=0)
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class AuditEvent(db.Model):
    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_user_created", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    role: Mapped[str | None] = mapped_column(String(32))
    action: Mapped[str] = mapped_column(String(64), index=True)
    tool_name: Mapped[str | None] = mapped_column(String(64), index=True)
    arguments: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(32))
    error_type: Mapped[str | None] = mapped_column(String(64))
    duration_ms: Mapped[int | None]
    conversation_id: Mapped[str | None] = mapped_column(String(32), index=True)
    message_id: Mapped[str | None] = mapped_column(String(32))
    request_id: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[str | None] = mapped_column(Text)
    # The trace and span it happened in (OpenTelemetry, when traces are on): a booking's event
    # carries its decision's trace, as its ledger movement does.
    trace_id: Mapped[str | None] = mapped_column(String(32), index=True)
    span_id: Mapped[str | None] = mapped_column(String(16))
