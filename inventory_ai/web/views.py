"""The staff chat page: log in, ask, see answers with their tool rounds, confirm stock changes.

Works as plain HTML forms; the page's JavaScript (static/chat.js) upgrades it to streaming, and asks
the server for an answer's final rendering (`GET /messages/<id>`), so a live answer and a reloaded
one are the same HTML. The overview and sign-off pages add their routes to this blueprint
(web/overview.py, web/signoffs.py).
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlparse

from flask import (
    abort,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import login_required
from sqlalchemy import func, select

from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.assistant.intake import MAX_MESSAGE_CHARS
from inventory_ai.auth import authenticated_user, check_credentials, log_in, log_out
from inventory_ai.database import writing
from inventory_ai.errors import DomainError, NotFound
from inventory_ai.extensions import chat_limit, db, login_limit
from inventory_ai.models import (
    Conversation,
    MessageStatus,
    Signoff,
    SignoffStatus,
    ToolCallRecord,
    User,
)
from inventory_ai.services import approvals, clock, conversations, shown, sites
from inventory_ai.services.bookings import MOVEMENTS_BY_ROLE
from inventory_ai.services.units import parse_quantity
from inventory_ai.text import language_of
from inventory_ai.web import bp
from inventory_ai.web.answers import answer_view
from inventory_ai.web.i18n import LANGUAGES, QUICK_ACTIONS, language, place_names, strings
from inventory_ai.web.overview import only_label
from inventory_ai.web.tables import PAGED_TOOLS, Cells, parsed, result_table


def _safe_next(target: str | None) -> str:
    if target and not urlparse(target).netloc and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("web.index")


@bp.app_context_processor
def _interface():
    lang = language()
    user = authenticated_user()
    signer = user is not None and user.role in approvals.SIGNERS
    return {"lang": lang, "t": strings(lang), "signer": signer, "waiting_signoffs": _waiting_signoffs}


def _waiting_signoffs() -> int:
    """How many bookings wait for a sign-off: the navigation shows it to those who sign."""
    return db.session.scalar(
        select(func.count()).select_from(Signoff).where(Signoff.status == SignoffStatus.WAITING)
    )


@bp.errorhandler(429)
def _too_many(exc):
    """The staff pages' own 429 page, in the user's language (the JSON API answers its own)."""
    response = make_response(strings(language())["too_many"], 429)
    response.headers.update(
        {k: v for k, v in exc.get_headers() if k.lower().startswith(("retry-after", "x-ratelimit"))}
    )
    return response


@bp.get("/favicon.ico")
def favicon():
    """Browsers ask for it whatever the page says; the page links the same icon."""
    return bp.send_static_file("favicon.svg")


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
        log_in(user)
        return redirect(_safe_next(request.args.get("next")))
    return render_template("login.html")


@bp.post("/logout")
@login_required
def logout():
    log_out()
    return redirect(url_for("web.login"))


@bp.post("/language")
@login_required
def choose_language():
    """The user's language, kept with the user: the page, the assistant's answers, names."""
    chosen = request.form.get("language", "")
    if chosen not in LANGUAGES:
        return strings(language())["bad_language"], 400
    user = authenticated_user()
    user.language = chosen
    db.session.commit()
    return redirect(_safe_next(_path_of(request.referrer)))


def _path_of(url: str | None) -> str | None:
    """The path of a same-site page we came from (the Referer), to go back to it."""
    if not url:
        return None
    parsed_url = urlparse(url)
    if parsed_url.netloc and parsed_url.netloc != request.host:
        return None
    return parsed_url.path or None


# --- the chat page ---------------------------------------------------------------------------


def _chat_page(conversation: Conversation | None):
    user = authenticated_user()
    lang = language()
    t = strings(lang)
    manager().recovery.expire_due(db.session)  # a sign-off past its time shows as expired
    transcript = []
    draft = ""
    if conversation is not None:
        _outcomes_seen(conversation.id)
        asked = [m for m in conversation.messages if m.role == "user"]
        for m in conversation.messages:
            if m.role == "user":
                transcript.append(
                    {"role": "user", "id": m.id, "content": m.content, "lang": _other_lang(m.content, lang)}
                )
            else:
                transcript.append({"role": "assistant", "view": answer_view(m, lang, t)})
        last = conversation.messages[-1] if conversation.messages else None
        if asked and last is not None and last.status not in UNFINISHED:
            transcript[-2 if last.role == "assistant" else -1]["editable"] = True
        edited = request.args.get("edit")
        draft = next((m.content for m in asked if m.id == edited), "")
    query = (request.args.get("q") or "").strip()[: conversations.SEARCH_MAX_CHARS]
    return render_template(
        "chat.html",
        groups=_sidebar_groups(user, conversation.id if conversation else None, query, t),
        query=query,
        conversation=conversation,
        transcript=transcript,
        draft=draft,
        title_lang=_other_lang(conversation.title, lang) if conversation and conversation.title else None,
        newest_card_field=_newest_card_field(transcript),
        quick_actions=_quick_actions(user, lang),
        sites_only=only_label(sites.of_user(db.session, user), lang, t),
        timezone=clock.PLANT.key,
        limit=MAX_MESSAGE_CHARS,
    )


def _outcomes_seen(conversation_id: str) -> None:
    """Opening a conversation shows its sign-off outcomes in place: the sidebar stops marking it."""
    if approvals.marks(db.session, [conversation_id]).get(conversation_id) in approvals.MARKED:
        with writing(db.session):
            approvals.seen(db.session, conversation_id)
            db.session.commit()


UNFINISHED = {MessageStatus.RUNNING, MessageStatus.AWAITING_CONFIRMATION}


def _newest_card_field(transcript: list[dict]) -> str | None:
    """The id of the newest confirmation card's first field: the skip link's target."""
    cards = [card for m in transcript if m["role"] == "assistant" for card in m["view"].cards]
    if not cards:
        return None
    card = cards[-1]
    return f"{'quantity' if card.quantity is not None else 'reason'}-{card.tool_call_id}"


def _other_lang(text: str, lang: str) -> str | None:
    """The `lang` a text needs when it is not in the page's language (screen readers, fonts)."""
    written = language_of(text)
    if written == lang:
        return None
    return "zh-CN" if written == "zh" else "en"


def _sidebar_groups(user: User, current: str | None, query: str, t: dict[str, str]) -> list[dict]:
    """The sidebar's conversations (those whose title or messages hold `query`, when given), in
    groups by the plant's day they were last used: 今天, 昨天, then each earlier day."""
    if query:
        found = conversations.search(db.session, user, query)
    else:
        found = [(c, "") for c in conversations.recent(db.session, user, 50)]
    groups: list[dict] = []
    today = clock.today()
    marks = approvals.marks(db.session, [c.id for c, _match in found])  # sign-offs: waiting, outcomes
    for c, match in found:
        day = shown.plant_day(c.updated_at)
        if not groups or groups[-1]["day"] != day:
            groups.append({"day": day, "label": _day_label(day, today, t), "items": []})
        groups[-1]["items"].append(
            {
                "c": c,
                "time": shown.when(c.updated_at, "time"),
                "match": match,
                "current": c.id == current,
                "lang": _other_lang(c.title, language()),
                "mark": marks.get(c.id),
            }
        )
    return groups


WEEKDAYS = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")


def _day_label(day, today, t: dict[str, str]) -> str:
    if day == today:
        return t["today"]
    if day == today - timedelta(days=1):
        return t["yesterday"]
    if language() == "zh":
        return f"{day.month}月{day.day}日 {WEEKDAYS[day.weekday()]}" + (
            "" if day.year == today.year else f" {day.year}"
        )
    return f"{day:%a} {day.day} {day:%b}" + ("" if day.year == today.year else f" {day.year}")


@bp.get("/conversation-list")
@login_required
def conversation_list():
    """The sidebar's list alone, for the page's search as one types (static/chat.js)."""
    t = strings(language())
    query = (request.args.get("q") or "").strip()[: conversations.SEARCH_MAX_CHARS]
    groups = _sidebar_groups(authenticated_user(), request.args.get("current"), query, t)
    return render_template("_conversation_list.html", groups=groups, query=query)


@bp.post("/c/<conversation_id>/rename")
@login_required
def rename_conversation(conversation_id: str):
    t = strings(language())
    try:
        conversations.rename(db.session, authenticated_user(), conversation_id, request.form.get("title", ""))
    except NotFound:
        abort(404)
    except DomainError as exc:
        flash(exc.message, "error")
    else:
        flash(t["renamed"], "success")
    return redirect(url_for("web.conversation", conversation_id=conversation_id))


@bp.post("/c/<conversation_id>/delete")
@login_required
def delete_conversation(conversation_id: str):
    t = strings(language())
    user = authenticated_user()
    try:
        title = conversations.own_conversation(db.session, user, conversation_id).title
        conversations.delete(db.session, user, conversation_id)
    except NotFound:
        abort(404)
    except DomainError as exc:
        flash(exc.message, "error")
        return redirect(url_for("web.conversation", conversation_id=conversation_id))
    flash(t["deleted"].format(title=title), "success")
    return redirect(url_for("web.index"))


def _quick_actions(user: User, lang: str) -> list[dict]:
    """The common asks this user's tools can answer (role and the admins' settings), in their language."""
    offered = set(manager().registry.toolbox_for(user.role, db.session).names)
    books = MOVEMENTS_BY_ROLE.get(user.role, frozenset())
    index = 0 if lang == "zh" else 1
    actions = []
    for needs, does, labels, words in QUICK_ACTIONS:
        tool, _, movement = needs.partition(":")
        if tool in offered and (not movement or movement in books):
            actions.append({"does": does, "label": labels[index], "text": words[index]})
    return actions


@bp.get("/")
@login_required
def index():
    return _chat_page(None)


@bp.get("/c/<conversation_id>")
@login_required
def conversation(conversation_id: str):
    try:
        found = conversations.own_conversation(db.session, authenticated_user(), conversation_id)
    except NotFound:
        abort(404)
    return _chat_page(found)


@bp.get("/messages/<message_id>")
@login_required
def answer(message_id: str):
    """One answer as the page draws it: the page's JavaScript puts it in place of the live view."""
    try:
        message = manager().own_message(db.session, authenticated_user(), message_id)
    except NotFound:
        abort(404)
    lang = language()
    return render_template("_answer.html", a=answer_view(message, lang, strings(lang)))


@bp.get("/calls/<tool_call_id>/all")
@login_required
def all_rows(tool_call_id: str):
    """Every row of a list the assistant showed the first of ("show all"): the same tool asked
    again with its largest page, through the same checks as any call (assistant/direct_calls.py)."""
    user = authenticated_user()
    found = db.session.execute(
        conversations.calls_in(db.session, user).where(ToolCallRecord.call_id == tool_call_id)
    ).first()
    if found is None or found[0].name not in PAGED_TOOLS:
        abort(404)
    call, message = found
    arguments = parsed(call.approved_arguments or call.arguments)
    arguments = {**(arguments if isinstance(arguments, dict) else {}), "limit": PAGED_TOOLS[call.name]}
    result = manager().call_directly(db.session, user, call.name, arguments, source="web")
    lang = language()
    t = strings(lang)
    table = result_table(parsed(result.content), Cells(lang, t, place_names(lang)))
    template = "_rows.html" if request.headers.get("X-Requested-With") == "fetch" else "rows.html"
    return render_template(template, table=table, error=None if table else t["failed"], message=message)


# --- the no-JavaScript path ------------------------------------------------------------------


@bp.post("/ask")
@login_required
@chat_limit
def ask():
    """Run the loop to its end, then show the conversation."""
    user = authenticated_user()
    try:
        turn = manager().prepare_message(
            db.session,
            user,
            request.form.get("message", ""),
            request.form.get("conversation_id") or None,
            language(),
        )
    except DomainError as exc:
        flash(exc.message, "error")
        return redirect(_safe_next(_path_of(request.referrer)))
    for _event in manager().run(db.session, turn):
        pass
    return redirect(url_for("web.conversation", conversation_id=turn.conversation_id))


@bp.post("/messages/<message_id>/decision")
@login_required
def decide(message_id: str):
    """Approve (with the quantity as the user changed it) or reject (with a reason)."""
    user = authenticated_user()
    if request.form.get("decision") not in ("approve", "reject"):
        return strings(language())["bad_decision"], 400
    approve = request.form.get("decision") == "approve"
    try:
        edited = _edited_quantity(request.form.get("quantity"), request.form.get("asked_quantity"))
        decision = decisions().prepare(
            db.session,
            user,
            message_id,
            approve,
            request.form.get("tool_call_id") or None,
            arguments=edited if approve else None,
            reason=(request.form.get("reason") or "").strip()[:500] or None,
        )
    except DomainError as exc:
        if exc.http_status == 404:
            abort(404)
        flash(exc.message, "error")
        return redirect(_safe_next(_path_of(request.referrer)))
    for _event in decisions().decide(db.session, decision):
        pass
    return redirect(url_for("web.conversation", conversation_id=decision.answer.conversation_id))


def _edited_quantity(given: str | None, asked: str | None) -> dict | None:
    """{"quantity": n} when the card's quantity was changed, else None (approve as asked). Read by
    the API's own rule (units.parse_quantity, as typed): "٥", "５" or "1e1" is refused, never booked."""
    if not given or given.strip() == (asked or "").strip():
        return None
    quantity = parse_quantity(given, typed=True)
    return {"quantity": int(quantity) if quantity == quantity.to_integral_value() else float(quantity)}
