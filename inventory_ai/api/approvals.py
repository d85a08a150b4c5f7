"""Sign-off of large bookings by a second person: what waits, and the decision on one.

Managers and admins only (403 otherwise); nobody signs off their own booking. The decision resumes
the requester's answer in its conversation: the booking is made (or not) and the model answers.
"""

from __future__ import annotations

import json

from flask.views import MethodView
from flask_login import login_required
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from inventory_ai.api.effects import EffectSchema
from inventory_ai.api.fields import ExplicitDecision, UtcDateTime
from inventory_ai.assistant import effects
from inventory_ai.assistant.described import described
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.auth import authenticated_user
from inventory_ai.database import writing
from inventory_ai.errors import Forbidden
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Signoff, User
from inventory_ai.readers import reader_language
from inventory_ai.services import approvals, sites

blp = Blueprint("api_approvals", __name__, url_prefix="/api/v1", description="Sign-off of large bookings")


class SignoffDecisionSchema(ExplicitDecision):
    reason = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))


class CallResultSchema(Schema):
    status = fields.String()
    content = fields.String()


class SignoffSchema(Schema):
    tool_call_id = fields.String()
    tool = fields.String()
    description = fields.String(
        metadata={
            "description": "what the booking does, as the requester approved it, in the caller's language "
            "(their chosen one, else Accept-Language)"
        }
    )
    arguments = fields.Raw()
    effect = fields.Nested(
        EffectSchema,
        allow_none=True,
        metadata={"description": "while it waits: what it would do to the stock if signed off now"},
    )
    value_cny = fields.String()
    requested_by = fields.String()
    status = fields.String(metadata={"description": "waiting | approved | rejected | expired | withdrawn"})
    created_at = UtcDateTime()
    expires_at = UtcDateTime()
    decided_by = fields.String(allow_none=True)
    decided_at = UtcDateTime(allow_none=True)
    reason = fields.String(allow_none=True)
    result = fields.Nested(CallResultSchema, allow_none=True)
    answer_status = fields.String(
        metadata={"description": "the requester's answer: status after the decision"}
    )


def _view(signoff: Signoff) -> dict:
    call = signoff.call
    names = {
        u.id: u.username
        for u in db.session.query(User).filter(
            User.id.in_([i for i in (signoff.requested_by_id, signoff.decided_by_id) if i])
        )
    }
    settled = call.status not in ("pending_confirmation", "awaiting_signoff")
    arguments = json.loads(call.approved_arguments or call.arguments)
    effect = None
    if signoff.status == "waiting":  # computed now, for the person who signs it off
        effect = effects.of_call(
            manager().registry,
            db.session,
            db.engine,
            authenticated_user(),
            call.name,
            call.call_id,
            arguments,
        )
    return {
        "tool_call_id": call.call_id,
        "tool": call.name,
        "description": described(manager().registry, db.session, call, reader_language(authenticated_user())),
        "arguments": arguments,
        "effect": effect,
        "value_cny": f"{signoff.value_cny:.2f}",
        "requested_by": names.get(signoff.requested_by_id, ""),
        "status": signoff.status,
        "created_at": signoff.created_at,
        "expires_at": signoff.expires_at,
        "decided_by": names.get(signoff.decided_by_id),
        "decided_at": signoff.decided_at,
        "reason": signoff.reason,
        "result": {"status": call.status, "content": call.content or ""} if settled else None,
        "answer_status": db.session.get(ChatMessage, signoff.message_id).status,
    }


def _signers_only() -> None:
    if authenticated_user().role not in approvals.SIGNERS:
        raise Forbidden("only warehouse managers and admins sign off bookings")


@blp.route("/approvals")
class Approvals(MethodView):
    @blp.response(200, SignoffSchema(many=True))
    @login_required
    def get(self):
        """Bookings waiting for a sign-off, oldest first (expired ones are ended first)."""
        _signers_only()
        with writing(db.session):
            manager().recovery.expire_signoffs(db.session)
            db.session.commit()
        mine = sites.of_user(db.session, authenticated_user())
        return [_view(s) for s in approvals.waiting(db.session, sites=mine)]


@blp.route("/approvals/<tool_call_id>/decision")
class SignoffDecision(MethodView):
    @blp.arguments(SignoffDecisionSchema)
    @blp.response(200, SignoffSchema)
    @login_required
    def post(self, body, tool_call_id):
        """Approve or reject; the requester's answer resumes. 403 for your own booking, 409 when
        it was decided already (exactly one decision wins)."""
        _signers_only()
        decision = decisions().prepare_signoff(
            db.session, authenticated_user(), tool_call_id, body["decision"] == "approve", body.get("reason")
        )
        for _event in decisions().decide(db.session, decision):
            pass
        db.session.expire_all()
        return _view(approvals.of_call(db.session, tool_call_id))
