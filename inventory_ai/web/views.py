"""The staff web form: log in, ask, see answers with their tool rounds, confirm stock changes.

Works as plain HTML forms; the page's JavaScript (static/chat.js) upgrades it to streaming.
"""

from __future__ import annotations

from urllib.parse import urlparse

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import login_required, login_user, logout_user
from sqlalchemy import select

from inventory_ai.api.auth import check_credentials
from inventory_ai.assistant.setup import manager
from inventory_ai.assistant.transcript import TABLE_COLUMNS, message_view, result_table
from inventory_ai.auth import authenticated_user
from inventory_ai.errors import DomainError
from inventory_ai.extensions import chat_limit, db, login_limit
from inventory_ai.models import Conversation
from inventory_ai.web.i18n import language, strings

bp = Blueprint(
    "web", __name__, template_folder="templates", static_folder="static", static_url_path="/static"
)


def _safe_next(target: str | None) -> str:
    if target and not urlparse(target).netloc and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("web.index")


@bp.app_context_processor
def _interface():
    lang = language()
    return {"lang": lang, "t": strings(lang), "result_table": result_table, "table_columns": TABLE_COLUMNS}


@bp.route("/login", methods=["GET", "POST"])
@login_limit
def login():
    if request.method == "POST":
        user = check_credentials(
            request.form.get("username", "")[:64], request.form.get("password", "")[:256]
        )
        if user is None:
            flash(strings(language())["bad_login"], "error")
            return render_template("login.html"), 401
        login_user(user)
        return redirect(_safe_next(request.args.get("next")))
    return render_template("login.html")


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    return redirect(url_for("web.login"))


def _conversations(user):
    return db.session.scalars(
        select(Conversation)
        .where(Conversation.user_id == user.id)
        .order_by(Conversation.updated_at.desc())
        .limit(50)
    ).all()


def _transcript(conversation: Conversation) -> list[dict]:
    out = []
    for m in conversation.messages:
        out.append(
            {"role": "user", "content": m.content}
            if m.role == "user"
            else {"role": "assistant", **message_view(m)}
        )
    return out


@bp.get("/")
@login_required
def index():
    user = authenticated_user()
    return render_template("chat.html", conversations=_conversations(user), conversation=None, transcript=[])


@bp.get("/c/<conversation_id>")
@login_required
def conversation(conversation_id: str):
    user = authenticated_user()
    found = db.session.get(Conversation, conversation_id)
    if found is None or found.user_id != user.id:
        abort(404)
    return render_template(
        "chat.html", conversations=_conversations(user), conversation=found, transcript=_transcript(found)
    )


@bp.post("/ask")
@login_required
@chat_limit
def ask():
    """The no-JavaScript path: run the loop to its end, then show the conversation."""
    user = authenticated_user()
    try:
        turn = manager().prepare_message(
            db.session, user, request.form.get("message", ""), request.form.get("conversation_id") or None
        )
    except DomainError as exc:
        flash(exc.message, "error")
        return redirect(request.referrer or url_for("web.index"))
    for _event in manager().run(db.session, turn):
        pass
    return redirect(url_for("web.conversation", conversation_id=turn.conversation_id))


@bp.post("/messages/<message_id>/decision")
@login_required
def decide(message_id: str):
    user = authenticated_user()
    try:
        turn, call_ids, approve = manager().prepare_decision(
            db.session,
            user,
            message_id,
            request.form.get("decision") == "approve",
            request.form.get("tool_call_id") or None,
        )
    except DomainError as exc:
        if exc.http_status == 404:
            abort(404)
        flash(exc.message, "error")
        return redirect(request.referrer or url_for("web.index"))
    for _event in manager().decide(db.session, turn, call_ids, approve):
        pass
    return redirect(url_for("web.conversation", conversation_id=turn.conversation_id))
