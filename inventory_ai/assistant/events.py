"""The loop's event stream. The JSON endpoint and the SSE endpoint both consume it: one loop, two views."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"

    def payload(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Start(Event):
    """The first event of every stream: which conversation and answer it is."""

    kind: ClassVar[str] = "start"
    conversation_id: str
    message_id: str


@dataclass(frozen=True)
class Delta(Event):
    kind: ClassVar[str] = "delta"
    text: str


@dataclass(frozen=True)
class Reasoning(Event):
    kind: ClassVar[str] = "reasoning"
    text: str


@dataclass(frozen=True)
class ToolCallStart(Event):
    kind: ClassVar[str] = "tool_call_start"
    round: int
    tool_call_id: str
    name: str
    arguments: dict | str
    description: str | None = None


@dataclass(frozen=True)
class ToolResultEvent(Event):
    kind: ClassVar[str] = "tool_result"
    round: int
    tool_call_id: str
    name: str
    status: str
    content: str
    duration_ms: int = 0


@dataclass(frozen=True)
class PendingCall:
    tool_call_id: str
    name: str
    arguments: dict
    description: str


@dataclass(frozen=True)
class ConfirmationRequired(Event):
    kind: ClassVar[str] = "confirmation_required"
    message_id: str
    pending: list[PendingCall] = field(default_factory=list)


@dataclass(frozen=True)
class Done(Event):
    kind: ClassVar[str] = "done"
    conversation_id: str
    message_id: str
    status: str
    reply: str


@dataclass(frozen=True)
class ErrorEvent(Event):
    kind: ClassVar[str] = "error"
    code: str
    message: str
    retry_after: int | None = None
