"""Conversations as their owner and the API see them: who owns what, the recent list, transcripts.

A conversation or answer that is not the caller's looks exactly like a missing one (NotFound).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai import strict_json
from inventory_ai.errors import NotFound
from inventory_ai.models import CallStatus, ChatMessage, Conversation, User


def own_conversation(session: Session, user: User, conversation_id: str) -> Conversation:
    conversation = session.get(Conversation, conversation_id)
    if conversation is None or conversation.user_id != user.id:
        raise NotFound("no such conversation")
    return conversation


def own_answer(session: Session, user: User, message_id: str) -> ChatMessage:
    message = session.get(ChatMessage, message_id)
    if message is None or message.role != "assistant" or message.conversation.user_id != user.id:
        raise NotFound("no such message")
    return message


def recent(session: Session, user: User, limit: int = 100) -> list[Conversation]:
    return list(
        session.scalars(
            select(Conversation)
            .where(Conversation.user_id == user.id)
            .order_by(Conversation.updated_at.desc())
            .limit(limit)
        )
    )


def transcript(conversation: Conversation, effects=None) -> list[dict]:
    """Every message in order: the user's as asked, each answer as `message_view` shows it
    (`effects(answer)`: its waiting calls' effects, call_id -> effect)."""
    return [
        {"role": "user", "id": m.id, "content": m.content}
        if m.role == "user"
        else {"role": "assistant", **message_view(m, effects(m) if effects else None)}
        for m in conversation.messages
    ]


def parsed_arguments(raw: str):
    """A call's stored arguments as JSON, when they are JSON this product takes (strict_json.py);
    anything else the model sent (not JSON, absurdly nested, numbers of thousands of digits) is
    shown as the text it was, never parsed again into something a view cannot serialise."""
    try:
        return strict_json.loads(raw or "{}")
    except strict_json.Unreadable:
        return raw


def message_view(message: ChatMessage, effects: dict[str, dict] | None = None) -> dict:
    """An answer as the API shows it; `effects` (call_id -> what the call would do, computed for
    the viewer: assistant/effects.py) go with its waiting calls."""
    rounds, pending = [], []
    for stored in message.rounds:
        calls, results = [], []
        for call in stored.calls:
            calls.append(
                {"id": call.call_id, "name": call.name, "arguments": parsed_arguments(call.arguments)}
            )
            if call.status == CallStatus.PENDING_CONFIRMATION:
                pending.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "arguments": parsed_arguments(call.arguments),
                        "description": call.description or "",
                        "effect": (effects or {}).get(call.call_id),
                    }
                )
            else:
                results.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "status": call.status,
                        "content": call.content or "",
                    }
                )
        rounds.append(
            {"assistant_response": stored.assistant_response, "tool_calls": calls, "results": results}
        )
    return {
        "conversation_id": message.conversation_id,
        "message_id": message.id,
        "status": message.status,
        "reply": message.content,
        "rounds": rounds,
        "pending": pending,
        "usage": {"input_tokens": message.input_tokens, "output_tokens": message.output_tokens},
        "model": message.model,
    }
