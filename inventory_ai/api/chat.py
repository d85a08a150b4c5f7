"""POST /api/v1/chat and its companions: confirmation decisions, cancel, conversation history.

One loop, two views: the JSON response drains the manager's event stream and returns the stored
result; with `Accept: text/event-stream` the same events are sent as Server-Sent Events.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import structlog
from flask import Response, g, request, stream_with_context
from flask.views import MethodView
from flask_login import login_required
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai import tracing
from inventory_ai.api.effects import EffectSchema
from inventory_ai.api.fields import ExplicitDecision, UtcDateTime
from inventory_ai.assistant import effects
from inventory_ai.assistant.answering import AnswerRef
from inventory_ai.assistant.events import ErrorEvent, Event, Start
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.assistant.intake import MAX_MESSAGE_CHARS
from inventory_ai.auth import authenticated_user
from inventory_ai.errors import error_response
from inventory_ai.extensions import chat_limit, db
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ToolCallRecord,
    ToolRound,
)
from inventory_ai.services import conversations
from inventory_ai.services.conversations import message_view

blp = Blueprint("api_chat", __name__, url_prefix="/api/v1", description="Chat with the assistant")


class ChatRequestSchema(Schema):
    message = fields.String(required=True, validate=validate.Length(min=1, max=MAX_MESSAGE_CHARS))
    conversation_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=32))


class DecisionSchema(ExplicitDecision):
    tool_call_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    arguments = fields.Dict(
        load_default=None,
        allow_none=True,
        metadata={
            "description": 'approve with these arguments changed (validated again), e.g. {"quantity": 18}'
        },
    )
    reason = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=500),
        metadata={"description": "why; a rejection's reason reaches the model"},
    )


class ToolCallSchema(Schema):
    id = fields.String()
    name = fields.String()
    arguments = fields.Raw()


class ToolResultSchema(Schema):
    tool_call_id = fields.String()
    name = fields.String()
    status = fields.String()
    content = fields.String()


class RoundSchema(Schema):
    assistant_response = fields.String(allow_none=True)
    tool_calls = fields.List(fields.Nested(ToolCallSchema))
    results = fields.List(fields.Nested(ToolResultSchema))


class PendingSchema(Schema):
    tool_call_id = fields.String()
    name = fields.String()
    arguments = fields.Raw()
    description = fields.String()
    effect = fields.Nested(EffectSchema, allow_none=True)


class UsageSchema(Schema):
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()


class ChatResponseSchema(Schema):
    conversation_id = fields.String()
    message_id = fields.String()
    status = fields.String()
    reply = fields.String()
    rounds = fields.List(fields.Nested(RoundSchema))
    pending = fields.List(fields.Nested(PendingSchema))
    usage = fields.Nested(UsageSchema)
    model = fields.String(allow_none=True, metadata={"description": "the model that wrote the final answer"})


def effects_for(message: ChatMessage) -> dict[str, dict]:
    """The effects of the answer's waiting calls, as the caller may see them, computed now."""
    return effects.of_answer(manager().registry, db.session, db.engine, authenticated_user(), message)


def viewed(message: ChatMessage) -> dict:
    waiting = message.status == MessageStatus.AWAITING_CONFIRMATION  # else no call waits: nothing to look up
    return message_view(message, effects_for(message) if waiting else None)


def _wants_stream() -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def _sse(event: Event) -> str:
    return f"event: {event.kind}\ndata: {json.dumps(event.payload(), ensure_ascii=False, default=str)}\n\n"


def respond(turn: AnswerRef, events: Iterator[Event]):
    """Drain the events into a JSON answer, or stream them; either way the loop is the same."""
    if _wants_stream():
        request_id = g.get("request_id")
        events = tracing.carried_steps(events)  # read after the view returned: in the request's trace

        def generate():
            structlog.contextvars.bind_contextvars(request_id=request_id)
            try:
                yield _sse(Start(turn.conversation_id, turn.message_id))  # the page knows where it is at once
                for event in events:
                    yield _sse(event)
            finally:
                # A client that went away: the answer stops now, in this request's context (the
                # loop ends it `cancelled`), not whenever the garbage collector gets to it.
                getattr(events, "close", lambda: None)()

        response = Response(stream_with_context(generate()), mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Accel-Buffering"] = "no"
        return response
    unavailable = None
    for event in events:
        if isinstance(event, ErrorEvent) and event.retry_after is not None:
            unavailable = event
    message = db.session.get(ChatMessage, turn.message_id)
    body = viewed(message)
    if unavailable is not None:
        response = error_response(
            429 if unavailable.code == "token_budget_exhausted" else 503,
            unavailable.code,
            unavailable.message,
            {"message_id": message.id, "conversation_id": message.conversation_id},
        )
        response.headers["Retry-After"] = str(unavailable.retry_after)
        return response
    return body


@blp.route("/chat")
class Chat(MethodView):
    # An instance, not the class: webargs builds a class's schema anew on every request (its fields
    # deep-copied), the hottest path in the product (measured in docs/benchmarks.md, the loop).
    @blp.arguments(ChatRequestSchema())
    @blp.response(200, ChatResponseSchema)
    @blp.alt_response(429, description="too many messages; see Retry-After")
    @blp.alt_response(503, description="the model is unavailable; see Retry-After")
    @login_required
    @chat_limit
    def post(self, body):
        user = authenticated_user()
        turn = manager().prepare_message(db.session, user, body["message"], body.get("conversation_id"))
        return respond(turn, manager().run(db.session, turn))


@blp.route("/chat/messages/<message_id>")
class MessageResource(MethodView):
    @blp.response(200, ChatResponseSchema)
    @login_required
    def get(self, message_id):
        return viewed(manager().own_message(db.session, authenticated_user(), message_id))


@blp.route("/chat/messages/<message_id>/decision")
class Decision(MethodView):
    @blp.arguments(DecisionSchema())
    @blp.response(200, ChatResponseSchema)
    @login_required
    def post(self, body, message_id):
        decision = decisions().prepare(
            db.session,
            authenticated_user(),
            message_id,
            body["decision"] == "approve",
            body.get("tool_call_id"),
            body.get("arguments"),
            body.get("reason"),
        )
        return respond(decision.answer, decisions().decide(db.session, decision))


@blp.route("/chat/messages/<message_id>/cancel")
class Cancel(MethodView):
    @blp.response(200, ChatResponseSchema)
    @login_required
    def post(self, message_id):
        return viewed(decisions().cancel(db.session, authenticated_user(), message_id))


class WaitingCallSchema(Schema):
    message_id = fields.String()
    conversation_id = fields.String()
    tool_call_id = fields.String()
    name = fields.String()
    arguments = fields.Raw()
    description = fields.String()
    effect = fields.Nested(EffectSchema, allow_none=True)
    source = fields.String(metadata={"description": "chat, or mcp for a call an MCP client made"})
    created_at = UtcDateTime()


@blp.route("/chat/pending")
class Pending(MethodView):
    @blp.response(200, WaitingCallSchema(many=True))
    @login_required
    def get(self):
        """Calls waiting for your confirmation, newest first: from your chats and from MCP clients
        acting as you. Decide them with POST /chat/messages/{message_id}/decision."""
        user = authenticated_user()
        registry = manager().registry
        rows = db.session.execute(
            select(ToolCallRecord, ChatMessage)
            .join(ToolRound, ToolCallRecord.round_id == ToolRound.id)
            .join(ChatMessage, ToolRound.message_id == ChatMessage.id)
            .join(Conversation, ChatMessage.conversation_id == Conversation.id)
            .where(
                Conversation.user_id == user.id,
                ChatMessage.status == MessageStatus.AWAITING_CONFIRMATION,
                ToolCallRecord.status == CallStatus.PENDING_CONFIRMATION,
            )
            .order_by(ChatMessage.created_at.desc())
            .limit(100)
        ).all()
        return [
            {
                "message_id": message.id,
                "conversation_id": message.conversation_id,
                "tool_call_id": call.call_id,
                "name": call.name,
                "arguments": json.loads(call.arguments),
                "description": call.description or "",
                "effect": effects.of_call(
                    registry, db.session, db.engine, user, call.name, call.call_id, json.loads(call.arguments)
                ),
                "source": message.source,
                "created_at": message.created_at,
            }
            for call, message in rows
        ]


class ConversationSummarySchema(Schema):
    id = fields.String()
    title = fields.String()
    updated_at = UtcDateTime()


class ConversationSchema(Schema):
    id = fields.String()
    title = fields.String()
    messages = fields.List(fields.Dict())


@blp.route("/conversations")
class Conversations(MethodView):
    @blp.response(200, ConversationSummarySchema(many=True))
    @login_required
    def get(self):
        return conversations.recent(db.session, authenticated_user())


@blp.route("/conversations/<conversation_id>")
class ConversationResource(MethodView):
    @blp.response(200, ConversationSchema)
    @login_required
    def get(self, conversation_id):
        conversation = conversations.own_conversation(db.session, authenticated_user(), conversation_id)
        return {
            "id": conversation.id,
            "title": conversation.title,
            "messages": conversations.transcript(conversation, effects_for),
        }
