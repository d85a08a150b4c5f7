"""One tool call from outside a chat (an MCP client): the same checks as a call the model makes,
and a booking is never made here: it waits for its user's approval like any other.

The call goes through the same path as in the loop (calls.py): the user's toolbox (role and the
admins' settings, decided now), arguments validated against the schema with every error listed,
typed errors, timeouts, result compaction, an audit event marked with where it came from. A call
that needs confirmation becomes an answer of its own, waiting in the user's conversations
(source "mcp"), decided in the web form or through the API (decisions.py); once decided it ends
with what happened, without asking a model.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.manager import ToolExecutionManager
from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.assistant.types import ToolCall
from inventory_ai.database import begin_write
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ToolCallRecord,
    ToolRound,
    User,
    new_call_id,
    new_id,
    utcnow,
)
from inventory_ai.text import storable

FROM_MCP = "mcp"


@dataclass(frozen=True)
class DirectResult:
    """What the caller gets: a result, a typed error, or a booking waiting for approval."""

    tool_call_id: str
    status: str  # success | error | pending_confirmation
    content: str  # the result or error as JSON (what the model would see)
    description: str | None = None  # for a pending call: what the user will approve
    message_id: str | None = None  # for a pending call: the answer it waits in


class DirectCalls:
    def __init__(self, answers: ToolExecutionManager):
        self.answers = answers

    def call(
        self, session: Session, user: User, name: str, arguments: dict, source: str = FROM_MCP
    ) -> DirectResult:
        call_id = new_call_id()
        toolbox = self.answers.registry.toolbox_for(user.role, session)
        context = ToolContext(
            user_id=user.id, username=user.username, role=user.role, session=session,
            engine=self.answers.engine(), request_id=None, conversation_id="", message_id="",
            language=user.language or "zh", tool_names=self.answers.registry.names(),
        )  # fmt: skip
        wire = ToolCall(call_id, name, dumps(arguments) if isinstance(arguments, dict) else str(arguments))
        session.commit()  # the tool's own connection, not a second one beside this read (decisions.py)
        prepared = self.answers.calls.prepare(wire, call_id, toolbox, context, ordinal=0)
        [outcome] = self.answers.calls.run([prepared], context)
        begin_write(session)
        if outcome.status == CallStatus.PENDING_CONFIRMATION:
            message = self._waiting_answer(
                session, user, prepared.call, call_id, prepared.description, source
            )
            self.answers.calls.audit(session, user, name, prepared.arguments, outcome, message, source)
            session.commit()
            content = dumps(
                {
                    "status": "awaiting_approval",
                    "tool_call_id": call_id,
                    "message_id": message.id,
                    "description": prepared.description,
                    "message": "not booked yet: the user approves or rejects it in the web form or the API",
                }
            )
            return DirectResult(call_id, outcome.status, content, prepared.description, message.id)
        self.answers.calls.audit(
            session, user, name, prepared.arguments or wire.arguments, outcome, None, source
        )
        session.commit()
        return DirectResult(call_id, outcome.status, outcome.content or "")

    def _waiting_answer(
        self, session: Session, user: User, call: ToolCall, call_id: str, description: str | None, source: str
    ) -> ChatMessage:
        """The booking as an answer of its own, waiting for the user in their conversations."""
        language = user.language or "zh"
        title = f"MCP · {description or call.name}"[:200]
        conversation = Conversation(id=new_id(), user_id=user.id, title=title, messages=[])
        asked = f"(via {source.upper()}) {call.name} {call.arguments}"
        conversation.messages.append(
            ChatMessage(created_seq=1, role="user", content=storable(asked)[:4000], language=language)
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
