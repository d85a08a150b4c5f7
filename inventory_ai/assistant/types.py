"""Small plain types passed between the loop, the tools and the providers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A call as the model asked for it; `arguments` is the raw JSON text, kept unchanged."""

    id: str
    name: str
    arguments: str

    def to_wire(self) -> dict:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    # A user turn that intake's screening flagged (messages.flagged). Never sent to a model as a
    # field; the offline provider leaves such a turn out of what a follow-up leans on.
    flagged: bool = False

    def to_wire(self) -> dict:
        """DashScope (and OpenAI-compatible) message shape."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [c.to_wire() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        return data


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict

    def to_wire(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelRequest:
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    language: str = "zh"
    # What is left of the answer's deadline: the provider gives up (retries included) by then.
    timeout_seconds: float | None = None
    # The asking user's role: the model reads it in the system prompt; the offline provider uses it
    # to say plainly when a role is why something cannot be done.
    role: str | None = None
    # The warehouses (codes) the asking user works in, None for every one: where the offline
    # provider books when a request names none.
    warehouses: tuple[str, ...] | None = None
    # The question was flagged by the screening at intake (services/screening.py): a provider
    # needs no screening of its own.
    flagged: bool = False


# What a provider yields while it answers: deltas, then exactly one ModelReply.
@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ModelReply:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    reasoning: str = ""


ProviderChunk = TextDelta | ReasoningDelta | ModelReply
