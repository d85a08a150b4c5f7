"""Admin: the audit trail (tool calls, decisions, admin actions), filtered."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai.api.admin.common import Order, PageArgs, admins_only, page_of, paginate
from inventory_ai.api.fields import TRACE_ID, UtcDateTime, to_naive_utc
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, User

blp = Blueprint("admin_audit", __name__, url_prefix="/api/v1/admin", description="Admin: audit events")
admins_only(blp)


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
    trace_id = fields.String(
        allow_none=True, metadata={"description": "the OpenTelemetry trace it happened in"}
    )
    span_id = fields.String(allow_none=True)


class AuditQuery(PageArgs):
    user = fields.String(validate=validate.Length(max=64))
    tool = fields.String(validate=validate.Length(max=64))
    status = fields.String(validate=validate.Length(max=32))
    action = fields.String(validate=validate.Length(max=64))
    conversation_id = fields.String(validate=validate.Length(max=32))
    trace_id = fields.String(validate=validate.Regexp(TRACE_ID))
    since = fields.DateTime()
    until = fields.DateTime()


LATEST_FIRST = Order((AuditEvent.created_at, AuditEvent.id), True, lambda e: (e.created_at, e.id))


@blp.route("/audit-events")
class AuditEvents(MethodView):
    @blp.arguments(AuditQuery, location="query")
    @blp.response(200, page_of(AuditSchema))
    def get(self, args):
        stmt = select(AuditEvent)
        if "user" in args:
            stmt = stmt.join(User, User.id == AuditEvent.user_id).where(User.username == args["user"])
        for arg, column in (
            ("tool", AuditEvent.tool_name),
            ("status", AuditEvent.status),
            ("action", AuditEvent.action),
            ("conversation_id", AuditEvent.conversation_id),
            ("trace_id", AuditEvent.trace_id),
        ):
            if arg in args:
                stmt = stmt.where(column == args[arg])
        if "since" in args:
            stmt = stmt.where(AuditEvent.created_at >= to_naive_utc(args["since"]))
        if "until" in args:
            stmt = stmt.where(AuditEvent.created_at < to_naive_utc(args["until"]))
        return paginate(db.session, stmt, args, LATEST_FIRST)
