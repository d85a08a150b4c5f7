"""The sign-off page (/approvals) for warehouse managers and admins: large bookings that wait for a
second person, approved or rejected here with a reason. The same decision as
POST /api/v1/approvals/{tool_call_id}/decision (assistant/decisions.py): exactly one decision wins,
nobody signs off their own, and the requester's answer resumes in its conversation.
"""

from __future__ import annotations

import json

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import login_required
from sqlalchemy import select

from inventory_ai.assistant import effects
from inventory_ai.assistant.described import described
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.auth import authenticated_user
from inventory_ai.database import writing
from inventory_ai.errors import DomainError, NotFound
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.services import approvals, shown, sites
from inventory_ai.web import bp
from inventory_ai.web.i18n import language, strings
from inventory_ai.web.overview import only_label


def _signers_only():
    """None for a manager or an admin; else the page that says who signs off (403)."""
    if authenticated_user().role in approvals.SIGNERS:
        return None
    return render_template("message.html", text=strings(language())["signers_only"]), 403


@bp.get("/approvals")
@login_required
def approvals_page():
    refused = _signers_only()
    if refused is not None:
        return refused
    with writing(db.session):  # expired sign-offs are ended first, as the API does
        manager().recovery.expire_signoffs(db.session)
        db.session.commit()
    mine = sites.of_user(db.session, authenticated_user())
    waiting = approvals.waiting(db.session, sites=mine)
    names = dict(
        db.session.execute(
            select(User.id, User.username).where(User.id.in_({s.requested_by_id for s in waiting}))
        ).all()
    )
    me = authenticated_user()
    lang = language()
    items = [
        {
            "tool_call_id": s.call.call_id,
            "description": described(manager().registry, db.session, s.call, lang),
            "value": shown.money(s.value_cny),
            "requested_by": names.get(s.requested_by_id, ""),
            "requested_at": shown.when(s.created_at),
            "expires_at": shown.when(s.expires_at),
            "own": s.requested_by_id == me.id,
            "effect": effects.of_call(
                manager().registry,
                db.session,
                db.engine,
                me,
                s.call.name,
                s.call.call_id,
                json.loads(s.call.approved_arguments or s.call.arguments),
            ),  # fmt: skip
        }
        for s in waiting
    ]
    lang_t = strings(lang)
    return render_template("approvals.html", items=items, only=only_label(mine, lang, lang_t))


@bp.post("/approvals/<tool_call_id>/decision")
@login_required
def sign_off(tool_call_id: str):
    refused = _signers_only()
    if refused is not None:
        return refused
    t = strings(language())
    if request.form.get("decision") not in ("approve", "reject"):  # never a default: refused
        return t["bad_decision"], 400
    approve = request.form.get("decision") == "approve"
    reason = (request.form.get("reason") or "").strip()[:500] or None
    try:
        decision = decisions().prepare_signoff(
            db.session, authenticated_user(), tool_call_id, approve, reason
        )
    except NotFound:  # none waits, or it is outside the signer's warehouses: not theirs to see
        abort(404)
    except DomainError as exc:
        flash(exc.message, "error")
        return redirect(url_for("web.approvals_page"))
    signoff = approvals.of_call(db.session, tool_call_id)
    what = described(manager().registry, db.session, signoff.call, language())
    for _event in decisions().decide(db.session, decision):
        pass
    flash(t["signed_approved" if approve else "signed_rejected"].format(what=what), "success")
    return redirect(url_for("web.approvals_page"))
