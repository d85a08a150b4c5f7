"""Conversations with the assistant, stored so a round is written the moment it completes.

A user message and the assistant message that answers it are two rows. The assistant message
holds only the final text; each tool round (text before the calls, the calls, their results)
is its own row, so history can be expanded back into model messages exactly.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inventory_ai.extensions import db
from inventory_ai.models.base import Money, new_call_id, new_id, utcnow


class MessageStatus(StrEnum):
    RUNNING = "running"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    AWAITING_SIGNOFF = "awaiting_signoff"  # the requester approved; a second person must too
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class CallStatus(StrEnum):
    SUCCESS = "success"
    ERROR = "error"
    PENDING_CONFIRMATION = "pending_confirmation"
    AWAITING_SIGNOFF = "awaiting_signoff"
    DECLINED = "declined"


class SignoffStatus(StrEnum):
    WAITING = "waiting"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"


def _one_of(column: str, enum) -> str:
    return f"{column} IN (" + ", ".join(f"'{v.value}'" for v in enum) + ")"


class Conversation(db.Model):
    __tablename__ = "conversations"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    title: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    # Deleted by its owner: gone from their list, search and pages; admins and the audit keep it.
    deleted_at: Mapped[datetime | None]

    messages: Mapped[list[ChatMessage]] = relationship(
        back_populates="conversation", order_by="ChatMessage.created_seq", cascade="all, delete-orphan"
    )


class ChatMessage(db.Model):
    __tablename__ = "messages"
    __table_args__ = (
        CheckConstraint("role IN ('user', 'assistant')", name="valid_role"),
        CheckConstraint(_one_of("status", MessageStatus), name="valid_status"),
        Index("ix_messages_conversation_seq", "conversation_id", "created_seq"),
        Index("ix_messages_status_heartbeat", "status", "heartbeat_at"),  # finding stale answers
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    # Monotonic order inside a conversation; timestamps can tie.
    created_seq: Mapped[int]
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(32), default=MessageStatus.COMPLETED.value)
    language: Mapped[str] = mapped_column(String(8), default="zh")
    error_code: Mapped[str | None] = mapped_column(String(64))
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    # A question's screening verdict, decided once at intake (assistant/intake.py): a run resumed
    # later reads it here; the text is never screened again.
    flagged: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The model that wrote the final answer (a fallback's, when the first choice failed).
    model: Mapped[str | None] = mapped_column(String(64))
    # Where the question came from: "chat", or "mcp" for a call an MCP client made (assistant/direct_calls.py).
    source: Mapped[str] = mapped_column(String(16), default="chat")
    # While running: refreshed by the process working on it (assistant/heartbeats.py). An answer
    # whose heartbeat stopped belongs to a process that died; it is ended as failed (interrupted).
    heartbeat_at: Mapped[datetime | None]
    input_tokens: Mapped[int] = mapped_column(default=0)
    output_tokens: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None]

    conversation: Mapped[Conversation] = relationship(back_populates="messages")
    rounds: Mapped[list[ToolRound]] = relationship(
        back_populates="message", order_by="ToolRound.position", cascade="all, delete-orphan"
    )


class ToolRound(db.Model):
    __tablename__ = "tool_rounds"

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"), index=True)
    position: Mapped[int]
    # Text the model produced before asking for tools (null when it went straight to calls).
    assistant_response: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    duration_ms: Mapped[int] = mapped_column(default=0)

    message: Mapped[ChatMessage] = relationship(back_populates="rounds")
    calls: Mapped[list[ToolCallRecord]] = relationship(
        back_populates="round", order_by="ToolCallRecord.position", cascade="all, delete-orphan"
    )


class ToolCallRecord(db.Model):
    __tablename__ = "tool_calls"
    __table_args__ = (CheckConstraint(_one_of("status", CallStatus), name="valid_status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("tool_rounds.id", ondelete="CASCADE"), index=True)
    position: Mapped[int]
    # The product's identity for the call (the API's tool_call_id, the booking's idempotency key):
    # unique everywhere, whatever ids the model sends.
    call_id: Mapped[str] = mapped_column(String(64), unique=True, default=new_call_id)
    # The id on the wire, in history: the model's own (which may repeat), or call_id if it gave none.
    model_call_id: Mapped[str] = mapped_column(String(64), default="")
    name: Mapped[str] = mapped_column(String(64))
    # Exactly as the model sent them (cut at a size limit), so history replays the call unchanged.
    arguments: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(String(32))
    # The `tool` message content sent back to the model (null while pending).
    content: Mapped[str | None] = mapped_column(Text)
    error_type: Mapped[str | None] = mapped_column(String(64))
    duration_ms: Mapped[int] = mapped_column(default=0)
    # The person's decision: arguments as approved when they edited them, who, when, and why.
    approved_arguments: Mapped[str | None] = mapped_column(Text)
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[datetime | None]
    decision_reason: Mapped[str | None] = mapped_column(String(500))

    round: Mapped[ToolRound] = relationship(back_populates="calls")
    signoff: Mapped[Signoff | None] = relationship(back_populates="call", cascade="all, delete-orphan")


class Signoff(db.Model):
    """A booking its requester approved that a second person (a manager or admin) must sign off,
    because of what it is worth. Exactly one decision settles it, or it expires."""

    __tablename__ = "signoffs"
    __table_args__ = (CheckConstraint(_one_of("status", SignoffStatus), name="valid_status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    call_id: Mapped[int] = mapped_column(ForeignKey("tool_calls.id", ondelete="CASCADE"), unique=True)
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"), index=True)
    requested_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    value_cny: Mapped[Money]
    status: Mapped[str] = mapped_column(String(16), default=SignoffStatus.WAITING.value, index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[datetime | None]
    reason: Mapped[str | None] = mapped_column(String(500))
    # When the requester first opened the conversation after the outcome: until then the sidebar
    # marks that conversation (web/views.py).
    seen_at: Mapped[datetime | None]

    call: Mapped[ToolCallRecord] = relationship(back_populates="signoff")


class ModelCall(db.Model):
    """One request to the model provider: usage for metrics and cost."""

    __tablename__ = "model_calls"
    # The daily token budget sums a user's calls since midnight before every message: read through
    # (user, time), only today's rows are visited, however long the user's history.
    __table_args__ = (Index("ix_model_calls_user_created", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str | None] = mapped_column(String(64))
    input_tokens: Mapped[int] = mapped_column(default=0)
    output_tokens: Mapped[int] = mapped_column(default=0)
    duration_ms: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
