"""Admin: every user's conversations, listed and read as transcripts."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai.api.admin.common import Order, PageArgs, admins_only, page_of, paginate
from inventory_ai.api.fields import UtcDateTime
from inventory_ai.errors import NotFound
from inventory_ai.extensions import db
from inventory_ai.models import Conversation, User
from inventory_ai.services.conversations import transcript

blp = Blueprint(
    "admin_conversations", __name__, url_prefix="/api/v1/admin", description="Admin: conversations"
)
admins_only(blp)


class AdminConversationSummarySchema(Schema):
    id = fields.String()
    user_id = fields.Integer()
    username = fields.Function(lambda c: db.session.get(User, c.user_id).username)
    title = fields.String()
    created_at = UtcDateTime()
    updated_at = UtcDateTime()
    deleted_at = UtcDateTime(allow_none=True, metadata={"description": "when its owner deleted it"})


class ConversationQuery(PageArgs):
    user = fields.String(validate=validate.Length(max=64), metadata={"description": "username"})


# Most recently used first; the id breaks ties, so a cursor knows where it stopped.
RECENT_FIRST = Order((Conversation.updated_at, Conversation.id), True, lambda c: (c.updated_at, c.id))


@blp.route("/conversations")
class Conversations(MethodView):
    @blp.arguments(ConversationQuery, location="query")
    @blp.response(200, page_of(AdminConversationSummarySchema))
    def get(self, args):
        stmt = select(Conversation)
        if "user" in args:
            stmt = stmt.join(User, User.id == Conversation.user_id).where(User.username == args["user"])
        return paginate(db.session, stmt, args, RECENT_FIRST)


@blp.route("/conversations/<conversation_id>")
class ConversationResource(MethodView):
    @blp.response(200)
    def get(self, conversation_id):
        conversation = db.session.get(Conversation, conversation_id)
        if conversation is None:
            raise NotFound("no such conversation")
        return {
            "id": conversation.id,
            "user_id": conversation.user_id,
            "title": conversation.title,
            "deleted_at": UtcDateTime()._serialize(conversation.deleted_at, None, None),
            "messages": transcript(conversation),
        }
