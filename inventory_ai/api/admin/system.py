"""Admin: users, tools and their role grants, intents, conversations, the audit trail, metrics."""

from __future__ import annotations

from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai.api.admin.common import PageArgs, admins_only, page_of, paginate
from inventory_ai.api.fields import UtcDateTime, to_naive_utc
from inventory_ai.assistant.setup import manager
from inventory_ai.auth import authenticated_user, end_logins, forget_tokens, hashed_password
from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.extensions import db
from inventory_ai.models import ROLES, AuditEvent, Conversation, Intent, ToolSetting, User, utcnow
from inventory_ai.services import audit
from inventory_ai.services.conversations import transcript
from inventory_ai.services.intents import MAX_KEYWORD_LENGTH, MAX_KEYWORDS, clean_keywords, create_intent
from inventory_ai.services.metrics import metrics

blp = Blueprint(
    "admin_system", __name__, url_prefix="/api/v1/admin", description="Admin: users, tools, intents, audit"
)
admins_only(blp)

PASSWORD = validate.Length(min=8, max=256)


# --- users -----------------------------------------------------------------------------------


class UserSchema(Schema):
    id = fields.Integer()
    username = fields.String()
    role = fields.String()
    active = fields.Boolean()
    created_at = UtcDateTime()


class UserCreateSchema(Schema):
    username = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z0-9_.-]{2,64}$"))
    password = fields.String(required=True, load_only=True, validate=PASSWORD)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class UserUpdateSchema(Schema):
    role = fields.String(validate=validate.OneOf(ROLES))
    active = fields.Boolean()


class PasswordSchema(Schema):
    password = fields.String(required=True, load_only=True, validate=PASSWORD)


class UserQuery(PageArgs):
    role = fields.String(validate=validate.OneOf(ROLES))
    active = fields.Boolean()


def _user(user_id: int) -> User:
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFound(f"no user {user_id}")
    return user


@blp.route("/users")
class Users(MethodView):
    @blp.arguments(UserQuery, location="query")
    @blp.response(200, page_of(UserSchema))
    def get(self, args):
        stmt = select(User).order_by(User.id)
        if "role" in args:
            stmt = stmt.where(User.role == args["role"])
        if "active" in args:
            stmt = stmt.where(User.active.is_(args["active"]))
        return paginate(db.session, stmt, args)

    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    def post(self, body):
        password_hash = hashed_password(body["password"])  # slow on purpose: before the write lock
        begin_write(db.session)
        if db.session.scalar(select(User.id).where(User.username == body["username"])) is not None:
            raise Conflict(f"user {body['username']!r} already exists")
        user = User(username=body["username"], role=body["role"], password_hash=password_hash)
        db.session.add(user)
        _audit("user_created", user.username)
        db.session.commit()
        return user


@blp.route("/users/<int:user_id>")
class UserResource(MethodView):
    @blp.response(200, UserSchema)
    def get(self, user_id):
        return _user(user_id)

    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    def patch(self, body, user_id):
        begin_write(db.session)
        user = _user(user_id)
        if user.id == authenticated_user().id and (
            body.get("active") is False or body.get("role", user.role) != user.role
        ):
            raise InvalidInput("admins cannot deactivate or demote themselves; ask another admin")
        for key, value in body.items():
            setattr(user, key, value)
        if body.get("active") is False:
            end_logins(user)  # deactivated: every session ends now, not when it expires
        _audit("user_changed", user.username, body)
        db.session.commit()
        forget_tokens()  # a new role or a deactivation applies to the user's tokens at once
        return user


@blp.route("/users/<int:user_id>/password")
class UserPassword(MethodView):
    @blp.arguments(PasswordSchema)
    @blp.response(204)
    def post(self, body, user_id):
        password_hash = hashed_password(body["password"])  # slow on purpose: before the write lock
        begin_write(db.session)
        user = _user(user_id)
        user.password_hash = password_hash
        end_logins(user)
        _audit("password_reset", user.username)
        db.session.commit()
        forget_tokens()  # again once committed: a token checked meanwhile saw it still good


# --- tools -----------------------------------------------------------------------------------


class ToolSchema(Schema):
    name = fields.String()
    description = fields.String()
    parameters = fields.Dict()
    read_only = fields.Boolean()
    requires_confirmation = fields.Boolean()
    enabled = fields.Boolean()
    allowed_roles = fields.List(fields.String())
    default_enabled = fields.Boolean()
    default_roles = fields.List(fields.String())
    overridden = fields.Boolean()


class ToolUpdateSchema(Schema):
    enabled = fields.Boolean(allow_none=True, metadata={"description": "null: back to the code default"})
    allowed_roles = fields.List(
        fields.String(validate=validate.OneOf(ROLES)),
        allow_none=True,
        metadata={"description": "null: back to the code default"},
    )


def _tool_view(name: str) -> dict:
    registry = manager().registry
    tool = registry.get(name)
    if tool is None:
        raise NotFound(f"no tool {name!r}")
    setting = db.session.get(ToolSetting, name)
    effective = registry.effective(tool, setting)
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "read_only": tool.read_only,
        "requires_confirmation": tool.requires_confirmation({}),
        "enabled": effective.enabled,
        "allowed_roles": sorted(r for r in ROLES if registry.permits(tool, setting, r))
        if effective.enabled
        else sorted(effective.allowed_roles),
        "default_enabled": tool.is_enabled(),
        "default_roles": sorted(r for r in ROLES if registry.permits(tool, None, r)),
        "overridden": effective.overridden,
    }


@blp.route("/tools")
class Tools(MethodView):
    @blp.response(200, ToolSchema(many=True))
    def get(self):
        return [_tool_view(t.name) for t in manager().registry.all()]


@blp.route("/tools/<name>")
class ToolResource(MethodView):
    @blp.response(200, ToolSchema)
    def get(self, name):
        return _tool_view(name)

    @blp.arguments(ToolUpdateSchema)
    @blp.response(200, ToolSchema)
    def patch(self, body, name):
        """Switch a tool or change its roles; effective on every user's next message."""
        _tool_view(name)  # 404 for an unknown tool
        begin_write(db.session)
        setting = db.session.get(ToolSetting, name) or ToolSetting(tool_name=name)
        if "enabled" in body:
            setting.enabled = body["enabled"]
        if "allowed_roles" in body:
            setting.allowed_roles = (
                sorted(set(body["allowed_roles"])) if body["allowed_roles"] is not None else None
            )
        setting.updated_by_id = authenticated_user().id
        setting.updated_at = utcnow()
        db.session.add(setting)
        _audit("tool_settings_changed", name, body)
        db.session.commit()
        manager().registry.settings_changed()
        return _tool_view(name)


# --- intents ---------------------------------------------------------------------------------


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
        return paginate(db.session, select(Intent).order_by(Intent.id), args)

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


# --- conversations, audit, metrics -----------------------------------------------------------


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


@blp.route("/conversations")
class Conversations(MethodView):
    @blp.arguments(ConversationQuery, location="query")
    @blp.response(200, page_of(AdminConversationSummarySchema))
    def get(self, args):
        stmt = select(Conversation).order_by(Conversation.updated_at.desc())
        if "user" in args:
            stmt = stmt.join(User, User.id == Conversation.user_id).where(User.username == args["user"])
        return paginate(db.session, stmt, args)


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


class AuditSchema(Schema):
    id = fields.Integer()
    created_at = UtcDateTime()
    user_id = fields.Integer(allow_none=True)
    role = fields.String(allow_none=True)
    action = fields.String()
    tool_name = fields.String(allow_none=True)
    arguments = fields.Raw(allow_none=True)
    status = fields.String()
    error_type = fields.String(allow_none=True)
    duration_ms = fields.Integer(allow_none=True)
    conversation_id = fields.String(allow_none=True)
    message_id = fields.String(allow_none=True)
    request_id = fields.String(allow_none=True)


class AuditQuery(PageArgs):
    user = fields.String(validate=validate.Length(max=64))
    tool = fields.String(validate=validate.Length(max=64))
    status = fields.String(validate=validate.Length(max=32))
    action = fields.String(validate=validate.Length(max=64))
    conversation_id = fields.String(validate=validate.Length(max=32))
    since = fields.DateTime()
    until = fields.DateTime()


@blp.route("/audit-events")
class AuditEvents(MethodView):
    @blp.arguments(AuditQuery, location="query")
    @blp.response(200, page_of(AuditSchema))
    def get(self, args):
        stmt = select(AuditEvent).order_by(AuditEvent.created_at.desc(), AuditEvent.id.desc())
        if "user" in args:
            stmt = stmt.join(User, User.id == AuditEvent.user_id).where(User.username == args["user"])
        for arg, column in (
            ("tool", AuditEvent.tool_name),
            ("status", AuditEvent.status),
            ("action", AuditEvent.action),
            ("conversation_id", AuditEvent.conversation_id),
        ):
            if arg in args:
                stmt = stmt.where(column == args[arg])
        if "since" in args:
            stmt = stmt.where(AuditEvent.created_at >= to_naive_utc(args["since"]))
        if "until" in args:
            stmt = stmt.where(AuditEvent.created_at < to_naive_utc(args["until"]))
        return paginate(db.session, stmt, args)


class MetricsQuery(Schema):
    days = fields.Integer(load_default=30, validate=validate.Range(min=1, max=366))


class ToolMetricsSchema(Schema):
    tool = fields.String()
    calls = fields.Integer()
    success_rate = fields.Float()
    p50_ms = fields.Integer(allow_none=True)
    p95_ms = fields.Integer(allow_none=True)


COST = "estimated CNY at INVENTORY_AI_MODEL_PRICES; null when a model has no price"


class ModelUsageSchema(Schema):
    model = fields.String()
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    cost_cny = fields.Float(allow_none=True, metadata={"description": COST})


class UserDayUsageSchema(Schema):
    user = fields.String()
    day = fields.String(metadata={"description": "the plant's day (INVENTORY_AI_TIMEZONE), YYYY-MM-DD"})
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    cost_cny = fields.Float(allow_none=True, metadata={"description": COST})
    models = fields.List(fields.Nested(ModelUsageSchema))


class MetricsSchema(Schema):
    days = fields.Integer()
    tools = fields.List(fields.Nested(ToolMetricsSchema))
    rounds_per_answer = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        metadata={"description": "number of answers by their number of tool rounds"},
    )
    tokens_per_user_per_day = fields.List(fields.Nested(UserDayUsageSchema))


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.arguments(MetricsQuery, location="query")
    @blp.response(200, MetricsSchema)
    def get(self, args):
        """Per tool: calls, success rate, p50/p95 ms; rounds per answer; tokens and estimated cost
        (CNY) per user per day, by model."""
        prices = current_app.extensions["inventory_ai.config"].model_prices
        return metrics(db.session, args["days"], prices)


def _audit(action: str, subject: str, change: dict | None = None) -> None:
    admin = authenticated_user()
    audit.record(
        db.session,
        action,
        "success",
        user_id=admin.id,
        role=admin.role,
        arguments={"subject": subject, **(change or {})},
    )
