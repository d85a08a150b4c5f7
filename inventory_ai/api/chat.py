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

from inventory_ai.api.fields import UtcDateTime
from inventory_ai.assistant.events import ErrorEvent, Event
from inventory_ai.assistant.manager import MAX_MESSAGE_CHARS, Turn
from inventory_ai.assistant.setup import manager
from inventory_ai.assistant.transcript import message_view
from inventory_ai.auth import authenticated_user
from inventory_ai.errors import NotFound, error_response
from inventory_ai.extensions import chat_limit, db
from inventory_ai.models import ChatMessage, Conversation

blp = Blueprint("api_chat", __name__, url_prefix="/api/v1", description="Chat with the assistant")


class ChatRequestSchema(Schema):
    message = fields.String(required=True, validate=validate.Length(min=1, max=MAX_MESSAGE_CHARS))
    conversation_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=32))


class DecisionSchema(Schema):
    decision = fields.String(required=True, validate=validate.OneOf(["approve", "reject"]))
    tool_call_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))


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


def _wants_stream() -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def _sse(event: Event) -> str:
    return f"event: {event.kind}\ndata: {json.dumps(event.payload(), ensure_ascii=False, default=str)}\n\n"


def respond(turn: Turn, events: Iterator[Event]):
    """Drain the events into a JSON answer, or stream them; either way the loop is the same."""
    if _wants_stream():
        request_id = g.get("request_id")

        def generate():
            structlog.contextvars.bind_contextvars(request_id=request_id)
            for event in events:
                yield _sse(event)

        response = Response(stream_with_context(generate()), mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Accel-Buffering"] = "no"
        return response
    unavailable = None
    for event in events:
        if isinstance(event, ErrorEvent) and event.retry_after is not None:
            unavailable = event
    message = db.session.get(ChatMessage, turn.message_id)
    body = message_view(message)
    if unavailable is not None:
        response = error_response(
            503,
            unavailable.code,
            unavailable.message,
            {"message_id": message.id, "conversation_id": message.conversation_id},
        )
        response.headers["Retry-After"] = str(unavailable.retry_after)
        return response
    return body


@blp.route("/chat")
class Chat(MethodView):
    @blp.arguments(ChatRequestSchema)
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
        return message_view(manager().own_message(db.session, authenticated_user(), message_id))


@blp.route("/chat/messages/<message_id>/decision")
class Decision(MethodView):
    @blp.arguments(DecisionSchema)
    @blp.response(200, ChatResponseSchema)
    @login_required
    def post(self, body, message_id):
        turn, call_ids, approve = manager().prepare_decision(
            db.session,
            authenticated_user(),
            message_id,
            body["decision"] == "approve",
            body.get("tool_call_id"),
        )
        return respond(turn, manager().decide(db.session, turn, call_ids, approve))


@blp.route("/chat/messages/<message_id>/cancel")
class Cancel(MethodView):
    @blp.response(200, ChatResponseSchema)
    @login_required
    def post(self, message_id):
        return message_view(manager().cancel(db.session, authenticated_user(), message_id))


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
        user = authenticated_user()
        return db.session.scalars(
            select(Conversation)
            .where(Conversation.user_id == user.id)
            .order_by(Conversation.updated_at.desc())
            .limit(100)
        ).all()


@blp.route("/conversations/<conversation_id>")
class ConversationResource(MethodView):
    @blp.response(200, ConversationSchema)
    @login_required
    def get(self, conversation_id):
        user = authenticated_user()
        conversation = db.session.get(Conversation, conversation_id)
        if conversation is None or conversation.user_id != user.id:
            raise NotFound("no such conversation")
        messages = []
        for m in conversation.messages:
            if m.role == "user":
                messages.append({"role": "user", "content": m.content, "id": m.id})
            else:
                messages.append({"role": "assistant", **message_view(m)})
        return {"id": conversation.id, "title": conversation.title, "messages": messages}
