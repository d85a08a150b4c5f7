"""One tool call from outside a chat (an MCP client): the same checks as a call the model makes,
and a booking is never made here: it waits for its user's approval like any other.

The call goes through the same path as in the loop (tool_calls.py): the user's toolbox (role and the
admins' settings, decided now), arguments validated against the schema with every error listed,
typed errors, timeouts, result compaction, an audit event marked with where it came from. A call
that needs confirmation becomes an answer of its own, waiting in the user's conversations
(source "mcp"), decided by a person on its page or through the API (decisions.py), never by the
client that asked; once decided it ends with what happened, without asking a model. The manager runs the call
(`ToolExecutionManager.call_directly`); here are what it answers and the answer a booking waits in.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.types import ToolCall
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ToolCallRecord,
    ToolRound,
    User,
    new_id,
    utcnow,
)

FROM_MCP = "mcp"


def approval_page(conversation_id: str) -> str:
    """Where the user decides a waiting booking: its conversation's page (web.conversation), a path
    on the server the user signs in to (a stdio server knows no host name)."""
    return f"/c/{conversation_id}"


def awaiting_approval(message: ChatMessage, call_id: str, description: str | None, effect) -> str:
    """What the client is told of a booking that waits for its user (JSON): where it is approved,
    what it would do to the stock (`effect`), and that the client cannot approve it."""
    return dumps(
        {
            "status": "awaiting_approval",
            "tool_call_id": call_id,
            "message_id": message.id,
            "conversation_id": message.conversation_id,
            "approve_at": approval_page(message.conversation_id),
            "description": description,
            "effect": effect,
            "message": "not booked yet: it waits for the user, who approves or rejects it on "
            "the page approve_at (signed in); this client cannot approve it",
        }
    )


@dataclass(frozen=True)
class DirectResult:
    """What the caller gets: a result, a typed error, or a booking waiting for approval."""

    tool_call_id: str
    status: str  # success | error | pending_confirmation
    content: str  # the result or error as JSON (what the model would see)
    description: str | None = None  # for a pending call: what the user will approve
    message_id: str | None = None  # for a pending call: the answer it waits in


def waiting_answer(
    session: Session, user: User, call: ToolCall, call_id: str, description: str | None, source: str
) -> ChatMessage:
    """The booking as an answer of its own, waiting for the user in their conversations."""
    language = user.language or "zh"
    title = f"MCP · {description or call.name}"[:200]
    conversation = Conversation(id=new_id(), user_id=user.id, title=title, messages=[])
    # Storable as it is: a waiting call names a tool, and its arguments passed strict_json (prepare).
    asked = f"(via {source.upper()}) {call.name} {call.arguments}"
    conversation.messages.append(
        ChatMessage(created_seq=1, role="user", content=asked[:4000], language=language)
    )
    answer = ChatMessage(
        created_seq=2,
        role="assistant",
        status=MessageStatus.AWAITING_CONFIRMATION.value,
        language=language,
        source=source,
        content="",
    )
    conversation.messages.append(answer)
    session.add(conversation)
    session.flush()
    stored = ToolRound(message_id=answer.id, position=0, started_at=utcnow())
    stored.calls.append(
        ToolCallRecord(
            position=0,
            call_id=call_id,
            model_call_id=call_id,
            name=call.name,
            arguments=call.arguments,
            description=description,
            status=CallStatus.PENDING_CONFIRMATION.value,
        )
    )
    session.add(stored)
    return answer
