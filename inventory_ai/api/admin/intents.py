"""Admin: the intents the offline assistant learns from (phrases that point at a tool)."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai.api.admin.common import Order, PageArgs, admins_only, page_of, paginate
from inventory_ai.assistant.extension import manager
from inventory_ai.auth import authenticated_user
from inventory_ai.database import begin_write
from inventory_ai.errors import NotFound
from inventory_ai.extensions import db
from inventory_ai.models import Intent
from inventory_ai.services.intents import MAX_KEYWORD_LENGTH, MAX_KEYWORDS, clean_keywords, create_intent

blp = Blueprint("admin_intents", __name__, url_prefix="/api/v1/admin", description="Admin: intents")
admins_only(blp)


class IntentSchema(Schema):
    id = fields.Integer(dump_only=True)
    name = fields.String(required=True, validate=validate.Regexp(r"^[a-z][a-z0-9_]{1,63}$"))
    keywords = fields.List(
        fields.String(validate=validate.Length(min=1, max=MAX_KEYWORD_LENGTH)),
        required=True,
        validate=validate.Length(min=1, max=MAX_KEYWORDS),
    )
    tool_name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    default_arguments = fields.Dict(load_default=dict)
    priority = fields.Integer(strict=True, load_default=60, validate=validate.Range(min=0, max=1000))
    active = fields.Boolean(load_default=True)


class IntentUpdateSchema(Schema):
    keywords = fields.List(
        fields.String(validate=validate.Length(min=1, max=MAX_KEYWORD_LENGTH)),
        validate=validate.Length(min=1, max=MAX_KEYWORDS),
    )
    default_arguments = fields.Dict()
    priority = fields.Integer(strict=True, validate=validate.Range(min=0, max=1000))
    active = fields.Boolean()


def _intent(intent_id: int) -> Intent:
    intent = db.session.get(Intent, intent_id)
    if intent is None:
        raise NotFound(f"no intent {intent_id}")
    return intent


@blp.route("/intents")
class Intents(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, page_of(IntentSchema))
    def get(self, args):
        return paginate(db.session, select(Intent), args, Order((Intent.id,), False, lambda i: (i.id,)))

    @blp.arguments(IntentSchema)
    @blp.response(201, IntentSchema)
    def post(self, body):
        intent = create_intent(
            db.session,
            body["name"],
            body["keywords"],
            body["tool_name"],
            manager().registry.names(),
            body["default_arguments"],
            body["priority"],
            authenticated_user().id,
        )
        if not body["active"]:
            intent.active = False
            db.session.commit()
        return intent


@blp.route("/intents/<int:intent_id>")
class IntentResource(MethodView):
    @blp.response(200, IntentSchema)
    def get(self, intent_id):
        return _intent(intent_id)

    @blp.arguments(IntentUpdateSchema)
    @blp.response(200, IntentSchema)
    def patch(self, body, intent_id):
        begin_write(db.session)
        intent = _intent(intent_id)
        if "keywords" in body:
            body["keywords"] = clean_keywords(body["keywords"])
        for key, value in body.items():
            setattr(intent, key, value)
        db.session.commit()
        return intent

    @blp.response(204)
    def delete(self, intent_id):
        begin_write(db.session)
        db.session.delete(_intent(intent_id))
        db.session.commit()
