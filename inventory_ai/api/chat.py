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

from inventory_ai.api.effects import EffectSchema
from inventory_ai.api.fields import ExplicitDecision, UtcDateTime
from inventory_ai.assistant import answer_spans, effects
from inventory_ai.assistant.answering import AnswerRef
from inventory_ai.assistant.events import ErrorEvent, Event, Start
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.assistant.intake import MAX_MESSAGE_CHARS
from inventory_ai.auth import authenticated_user
from inventory_ai.errors import error_response
from inventory_ai.extensions import chat_limit, db
from inventory_ai.logging import get_logger
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    MessageStatus,
    ToolCallRecord,
)
from inventory_ai.readers import reader_language
from inventory_ai.services import approvals, conversations
from inventory_ai.services.conversations import message_view

log = get_logger(__name__)
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


class SignoffOutcomeSchema(Schema):
    decision = fields.String(metadata={"description": "approved | rejected | expired | withdrawn"})
    by = fields.String(allow_none=True, metadata={"description": "who decided (none when it expired)"})
    at = fields.String(allow_none=True, metadata={"description": "when, UTC (RFC 3339)"})
    reason = fields.String(allow_none=True)


class SignoffOfCallSchema(SignoffOutcomeSchema):
    tool_call_id = fields.String()
    decision = fields.String(metadata={"description": "waiting | approved | rejected | expired | withdrawn"})


class ChatResponseSchema(Schema):
    conversation_id = fields.String()
    message_id = fields.String()
    status = fields.String()
    reply = fields.String()
    rounds = fields.List(fields.Nested(RoundSchema))
    pending = fields.List(fields.Nested(PendingSchema))
    usage = fields.Nested(UsageSchema)
    model = fields.String(allow_none=True, metadata={"description": "the model that wrote the final answer"})
    signoff = fields.Nested(
        SignoffOutcomeSchema,
        allow_none=True,
        metadata={"description": "the outcome of the answer's sign-off, once decided; null when none"},
    )
    signoffs = fields.List(
        fields.Nested(SignoffOfCallSchema), metadata={"description": "each booking's sign-off, in call order"}
    )


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
        events = answer_spans.carried_steps(events)  # read after the view returned: in the request's trace

        def generate():
            structlog.contextvars.bind_contextvars(request_id=request_id)
            try:
                yield _sse(Start(turn.conversation_id, turn.message_id))  # the page knows where it is at once
                for event in events:
                    yield _sse(event)
            except GeneratorExit:
                # The reader went away (a reload, a closed tab, a dropped connection): the answer
                # goes on to its end without one, stored as usual, for the page to pick up again.
                # Only a stop (POST …/cancel: the page's Stop button, Esc) ends an answer early.
                _finish_unread(events)
                raise
            finally:
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


def _finish_unread(events: Iterator[Event]) -> None:
    try:
        for _event in events:
            pass
    except Exception:  # the loop ends its answer itself (failed); this is only the reader's end
        log.exception("unread_answer_failed")


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
        turn = manager().prepare_message(
            db.session, user, body["message"], body.get("conversation_id"), reader_language(user)
        )
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
            conversations.calls_in(db.session, user)
            .where(
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
    signoff = fields.String(
        allow_none=True,
        metadata={
            "description": "waiting: a booking here waits for a sign-off; approved | rejected | expired: "
            "an outcome not seen yet (opening the conversation on the page sees it); null: neither"
        },
    )


class ConversationSchema(Schema):
    id = fields.String()
    title = fields.String()
    messages = fields.List(fields.Dict())


class ConversationQuery(Schema):
    q = fields.String(
        load_default="",
        validate=validate.Length(max=conversations.SEARCH_MAX_CHARS),
        metadata={"description": "only conversations whose title or messages hold this text"},
    )


class ConversationFoundSchema(ConversationSummarySchema):
    match = fields.String(
        allow_none=True, metadata={"description": "with `q`: the words around the first match in a message"}
    )


class RenameSchema(Schema):
    title = fields.String(required=True, validate=validate.Length(min=1, max=conversations.TITLE_MAX_CHARS))


@blp.route("/conversations")
class Conversations(MethodView):
    @blp.arguments(ConversationQuery(), location="query")
    @blp.response(200, ConversationFoundSchema(many=True))
    @login_required
    def get(self, args):
        """Your conversations, most recently used first; with `q`, those whose title or messages
        hold that text (at most 50), each with the words around its first match. `signoff` marks
        one whose booking waits for a sign-off, or whose outcome you have not opened yet."""
        manager().recovery.expire_due(db.session)  # a sign-off past its time shows as expired
        if args["q"].strip():
            found = conversations.search(db.session, authenticated_user(), args["q"])
        else:
            found = [(c, None) for c in conversations.recent(db.session, authenticated_user())]
        marks = approvals.marks(db.session, [c.id for c, _match in found])
        return [
            {"id": c.id, "title": c.title, "updated_at": c.updated_at, "signoff": marks.get(c.id), "match": m}
            for c, m in found
        ]


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

    @blp.arguments(RenameSchema())
    @blp.response(200, ConversationSummarySchema)
    @login_required
    def patch(self, body, conversation_id):
        """Rename a conversation of yours."""
        return conversations.rename(db.session, authenticated_user(), conversation_id, body["title"])

    @blp.response(204)
    @blp.alt_response(409, description="an answer in it is still running or waiting for your decision")
    @login_required
    def delete(self, conversation_id):
        """Delete a conversation of yours: it is gone from your list, search and pages; the audit
        trail and admins keep it."""
        conversations.delete(db.session, authenticated_user(), conversation_id)
