"""Stored conversation -> model messages (seed 004's expansion).

An assistant message is stored as its final text plus its tool rounds. For the model each round
becomes the assistant message that asked for the calls (its text and `tool_calls` exactly as the
model sent them) followed by one `tool` message per call, in call order; the final text follows.
"""

from __future__ import annotations

from inventory_ai.assistant.types import Message, ToolCall
from inventory_ai.models import CallStatus, ChatMessage, MessageStatus, ToolRound

MAX_HISTORY_MESSAGES = 20


def round_messages(stored: ToolRound) -> list[Message]:
    calls = tuple(ToolCall(c.call_id, c.name, c.arguments) for c in stored.calls)
    out = [Message("assistant", stored.assistant_response or "", tool_calls=calls)]
    for call in stored.calls:
        if call.status == CallStatus.PENDING_CONFIRMATION:
            continue  # not answered yet: the loop only replays rounds that are complete
        out.append(Message("tool", call.content or "", tool_call_id=call.call_id, name=call.name))
    return out


def expand(messages: list[ChatMessage], current: ChatMessage) -> list[Message]:
    """Messages for the model: earlier turns (bounded), then the current turn's rounds so far."""
    earlier = [m for m in messages if m.created_seq < current.created_seq][-MAX_HISTORY_MESSAGES:]
    out: list[Message] = []
    for stored in earlier:
        if stored.role == "user":
            out.append(Message("user", stored.content))
            continue
        if stored.status != MessageStatus.COMPLETED:
            continue  # a failed or cancelled answer is not shown to the model as if it were said
        for r in stored.rounds:
            out += round_messages(r)
        if stored.content:
            out.append(Message("assistant", stored.content))
    for r in current.rounds:
        out += round_messages(r)
    return out
