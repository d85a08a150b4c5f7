"""Who is calling: a session cookie (web form, scripts after /api/v1/auth/login) or a bearer token.

CSRF is enforced here, in one place: every cookie-authenticated write needs the token
(form field or X-CSRFToken header); bearer-token requests carry no ambient credential and need none.
What a bearer token may do is enforced here too, in one table (TOKEN_RULES): its scopes.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from flask import Flask, current_app, redirect, request, session, url_for
from flask_login import current_user, login_user, logout_user
from flask_wtf.csrf import CSRFError
from sqlalchemy import select, update
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.util import identity_key
from werkzeug.security import check_password_hash, generate_password_hash

from inventory_ai.change_markers import ChangeMarker
from inventory_ai.database import adopted, begin_write, write_transaction
from inventory_ai.errors import Forbidden, InvalidInput, error_response
from inventory_ai.extensions import csrf, db, login_manager
from inventory_ai.models import TOKEN_SCOPES, ApiToken, LoginSession, User, hash_token, scope_text, utcnow
from inventory_ai.services import audit

TOKEN_PREFIX = "iai_"
_WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Reachable without a CSRF token: logging in creates the session the token belongs to, and /mcp
# takes bearer tokens only, never the cookie (inventory_ai/mcp/http.py).
_CSRF_FREE_ENDPOINTS = {"api_auth.Login", "mcp.serve"}
# Views that take the write lock themselves, only for their short writes: those that check or hash
# a password (check_credentials; SQLite's one write lock is never held while a password is hashed),
# and the chat and its decisions, whose every write begins with database.begin_write (the loop's).
_LOCKING_THEMSELVES = {
    "api_auth.Login",
    "api_auth.Password",
    "web.login",
    "api_chat.Chat",
    "api_chat.Decision",
    # The CSV import checks every row holding no lock, then writes in short batches (materials.py).
    "admin_catalog.MaterialImport",
}
# "Last used" is kept to the minute: a script calling every second does not write every second.
LAST_USED_RESOLUTION = timedelta(minutes=1)
SESSION_KEY = "_login"  # the login's id, in the signed session cookie
# Hashed like a real password (same method and cost), checked when the name is unknown.
_DUMMY_HASH = generate_password_hash("not a password: evens out the time of a failed login")

# --- API token scopes -------------------------------------------------------------------------
# A session is a person, limited by their role only, its writes carrying the CSRF token. A bearer
# token is a script or an agent, limited by its role AND its scopes. `decide` (approve or reject a
# booking, sign off) is never given unless asked for: an agent that holds a token that can decide
# could approve the bookings it proposes itself, and an approval the agent gives itself is none.
READ, CHAT, DECIDE, ADMIN = TOKEN_SCOPES
DEFAULT_SCOPES = (READ, CHAT)
# What TOKEN_RULES may say besides a scope:
PUBLIC = "public"  # answers anyone: a token is neither needed nor looked at
ANY = "any"  # any usable token (what the view does is bounded by that token: issuing, revoking)
SESSION_ONLY = "session"  # a person signed in, never a token (changing the password)
AGENT = "agent"  # MCP: `chat`, and refused when the token could also `decide` or `admin`
# What an MCP client's token must not have: the client is an agent, and with either scope it could
# have a booking made that no person approved.
_NOT_FOR_AGENTS = {
    DECIDE: "approve the bookings it proposes itself",
    ADMIN: "book stock through the admin API without any approval, or give itself a login",
}
_WRITES_ADMIN = {"GET": READ, "POST": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}

# What a bearer token must carry, per view (Flask endpoint) and method (HEAD as GET; OPTIONS
# answers anyone). Deny by default: a view that is not here takes no token at all, and
# tests/api/test_token_scopes.py fails for every route missing here.
TOKEN_RULES: dict[str, dict[str, str]] = {
    # anyone, signed in or not
    "health.healthz": {"GET": PUBLIC},
    "health.readyz": {"GET": PUBLIC},
    "observability.metrics": {"GET": PUBLIC},
    "api-docs.openapi_json": {"GET": PUBLIC},
    "web.static": {"GET": PUBLIC},
    "web.favicon": {"GET": PUBLIC},
    "web.login": {"GET": PUBLIC, "POST": PUBLIC},
    "api_auth.Login": {"POST": PUBLIC},
    # who am I, my tokens (a token issues tokens of at most its own scopes: issue_scopes)
    "api_auth.Logout": {"POST": ANY},
    "web.logout": {"POST": ANY},
    "api_auth.Password": {"POST": SESSION_ONLY},
    "api_auth.Me": {"GET": READ},
    "api_auth.Tokens": {"GET": READ, "POST": ANY},
    "api_auth.TokenResource": {"DELETE": ANY},
    # chat
    "api_chat.Chat": {"POST": CHAT},
    "api_chat.MessageResource": {"GET": READ},
    "api_chat.Cancel": {"POST": CHAT},
    "api_chat.Pending": {"GET": READ},
    "api_chat.Conversations": {"GET": READ},
    "api_chat.ConversationResource": {"GET": READ, "PATCH": CHAT, "DELETE": CHAT},
    "web.index": {"GET": READ},
    "web.conversation": {"GET": READ},
    "web.answer": {"GET": READ},
    "web.all_rows": {"GET": READ},
    "web.overview": {"GET": READ},
    "web.conversation_list": {"GET": READ},
    "web.rename_conversation": {"POST": CHAT},
    "web.delete_conversation": {"POST": CHAT},
    "web.ask": {"POST": CHAT},
    "web.choose_language": {"POST": CHAT},
    "mcp.serve": {"GET": AGENT, "POST": AGENT, "DELETE": AGENT},
    # decisions: a person's (a session with its CSRF token), or a token issued with `decide`
    "api_chat.Decision": {"POST": DECIDE},
    "web.decide": {"POST": DECIDE},
    "api_approvals.Approvals": {"GET": READ},
    "web.approvals_page": {"GET": READ},
    "api_approvals.SignoffDecision": {"POST": DECIDE},
    "web.sign_off": {"POST": DECIDE},
    # the admin API (admins only, whatever the token): reads with `read`, writes with `admin`
    "admin_catalog.Materials": _WRITES_ADMIN,
    "admin_catalog.MaterialResource": _WRITES_ADMIN,
    "admin_catalog.MaterialImport": _WRITES_ADMIN,
    "admin_catalog.Levels": _WRITES_ADMIN,
    "admin_catalog.Movements": _WRITES_ADMIN,
    "admin_catalog.PurchaseRequests": _WRITES_ADMIN,
    "admin_catalog.Approve": _WRITES_ADMIN,
    "admin_catalog.Reject": _WRITES_ADMIN,
    "admin_users.Users": _WRITES_ADMIN,
    "admin_users.UserResource": _WRITES_ADMIN,
    "admin_users.UserPassword": _WRITES_ADMIN,
    "admin_tools.Tools": _WRITES_ADMIN,
    "admin_tools.ToolResource": _WRITES_ADMIN,
    "admin_intents.Intents": _WRITES_ADMIN,
    "admin_intents.IntentResource": _WRITES_ADMIN,
    "admin_conversations.Conversations": _WRITES_ADMIN,
    "admin_conversations.ConversationResource": _WRITES_ADMIN,
    "admin_audit.AuditEvents": _WRITES_ADMIN,
    "admin_metrics.Metrics": _WRITES_ADMIN,
}
_SCOPES_KEY = "inventory_ai.token_scopes"  # in the request's environ: this request's token's scopes


def token_rule(endpoint: str | None, method: str) -> str | None:
    """What a bearer token needs for this view and method; None: not declared (refused)."""
    return TOKEN_RULES.get(endpoint or "", {}).get("GET" if method == "HEAD" else method)


def scope_refusal(rule: str | None, scopes: frozenset[str]) -> tuple[str, str, str | None] | None:
    """Why a token with `scopes` may not pass `rule`: (error code, message, the scope it lacks),
    or None when it may."""
    if rule in (PUBLIC, ANY):
        return None
    if rule is None or rule == SESSION_ONLY:
        return "insufficient_scope", "this takes no API token: sign in", None
    if rule == AGENT:
        for scope, could in _NOT_FOR_AGENTS.items():
            if scope in scopes:
                return (
                    f"{scope}_scope_refused",
                    f"this API token has the `{scope}` scope, and MCP clients are agents: with it an "
                    f"agent could {could}. Give the agent a token with `read` and `chat` only "
                    "(docs/mcp.md)",
                    None,
                )
        rule = CHAT
    if rule in scopes:
        return None
    if rule == DECIDE:
        why = (
            "approving or rejecting a booking is a person's decision: sign in (a session with its CSRF "
            "token), or use a token issued with the `decide` scope, never one an agent holds"
        )
    else:
        why = f"this API token lacks the `{rule}` scope (it has: {', '.join(sorted(scopes)) or 'none'})"
    return "insufficient_scope", why, rule


class ScopeRefused(Forbidden):
    code = "insufficient_scope"


def issue_scopes(user: User, asked: list[str] | None, minting: frozenset[str] | None) -> tuple[str, ...]:
    """The scopes a new token gets: `asked`, or DEFAULT_SCOPES (never `decide` nor `admin` unless
    asked for). `admin` only for admins (422). `minting`: the scopes of the token that asks, when a
    token asks (a token issues none it does not hold itself: 403), None for a session."""
    wanted = tuple(s for s in TOKEN_SCOPES if s in (DEFAULT_SCOPES if asked is None else asked))
    if ADMIN in wanted and not user.is_admin:
        raise InvalidInput(
            "scopes: `admin` is only for admins' tokens", {"fields": {"scopes": "admin: admins only"}}
        )
    lacking = [s for s in wanted if minting is not None and s not in minting]
    if lacking:
        raise ScopeRefused(
            f"a token issues tokens of at most its own scopes; this one lacks {', '.join(lacking)}",
            {"required_scope": lacking[0]},
        )
    return wanted


def request_token_scopes() -> frozenset[str] | None:
    """This request's bearer token's scopes; None for a session (or nobody)."""
    return request.environ.get(_SCOPES_KEY)


def _load_user(user_id: str) -> User | None:
    """The cookie's user, if its login has not ended (logout, password change, deactivation):
    one query for the user and the login together."""
    if request.headers.get("Authorization", "").startswith("Bearer "):
        return None  # an explicit token decides, not a cookie that happens to be there
    login = session.get(SESSION_KEY)
    if not user_id.isdigit() or not isinstance(login, str):
        return None
    return db.session.scalar(
        select(User)
        .join(LoginSession, LoginSession.user_id == User.id)
        .where(
            User.id == int(user_id),
            User.active.is_(True),
            LoginSession.id == login,
            LoginSession.ended_at.is_(None),
        )
    )


def _load_from_token(req) -> User | None:
    header = req.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return None
    try:
        bearer = authenticate_token(header[7:].strip())
    except TokenRefused:
        return None
    req.environ[_SCOPES_KEY] = bearer.scopes
    return bearer.user


def _unauthorized():
    if request.path.startswith("/api/"):
        return error_response(401, "unauthorized", "log in or send a valid Bearer token")
    return redirect(url_for("web.login", next=request.path))


def check_token_scopes():
    """A bearer token passes only with the scope its view and method need (TOKEN_RULES): 403
    `insufficient_scope` naming it, as RFC 6750 says, before anything else is done."""
    if request.method == "OPTIONS" or request.endpoint is None:
        return None  # no view runs: the Allow header, CORS's preflight, or a 404
    if not request.headers.get("Authorization", "").startswith("Bearer "):
        return None
    rule = token_rule(request.endpoint, request.method)
    if rule == PUBLIC or not current_user.is_authenticated:
        return None  # a refused token: the view answers 401 where it needs someone
    refusal = scope_refusal(rule, request_token_scopes() or frozenset())
    if refusal is None:
        return None
    code, message, scope = refusal
    challenge = 'Bearer realm="inventory_ai", error="insufficient_scope"'
    if scope is not None:
        challenge += f', scope="{scope}"'
    details = {"required_scope": scope} if scope is not None else None
    return error_response(403, code, message, details, {"WWW-Authenticate": challenge})


def protect_writes():
    if request.method in _WRITE_METHODS:
        # Who is calling first (a bearer token's "last used" stamp writes on its own connection),
        # then the request's own transaction takes SQLite's write lock up front: a write that
        # read first cannot take it later once another writer committed (SQLITE_BUSY_SNAPSHOT,
        # not retried), while a writer waiting for the lock queues on busy_timeout.
        current_user._get_current_object()
        if request.endpoint not in _LOCKING_THEMSELVES:
            begin_write(db.session)
    if request.method not in _WRITE_METHODS or request.endpoint in _CSRF_FREE_ENDPOINTS:
        return None
    if request.headers.get("Authorization", "").startswith("Bearer "):
        return None
    if request.path.startswith("/api/") and not current_user.is_authenticated:
        return None  # no session to ride on: the view answers 401
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return None
    csrf.protect()
    return None


def _csrf_failed(exc: CSRFError):
    if request.path.startswith("/api/"):
        return error_response(400, "csrf_failed", exc.description)
    return exc.description, 400


def init_app(app: Flask) -> None:
    login_manager.login_view = "web.login"
    login_manager.user_loader(_load_user)
    login_manager.request_loader(_load_from_token)
    login_manager.unauthorized_handler(_unauthorized)
    app.before_request(check_token_scopes)
    app.before_request(protect_writes)
    app.errorhandler(CSRFError)(_csrf_failed)


def check_credentials(username: str, password: str) -> User | None:
    """The active user with this name and password, or None; either way an audit event.

    Every refusal costs the same: the password is checked against the user's hash, or a dummy one
    for a name that does not exist, before anything else (whether the user is active) is looked
    at, so timing tells neither which names exist nor which are deactivated. The hashing (~0.1 s)
    holds no lock: the request's write transaction (auth.protect_writes) is ended first, and the
    write lock is taken again only for the audit event."""
    db.session.commit()  # no write lock (SQLite: the whole database) while a password is hashed
    user = db.session.scalar(select(User).where(User.username == username))
    db.session.commit()  # nor a read snapshot: the write below starts afresh (database.begin_write)
    matches = check_password_hash(user.password_hash if user is not None else _DUMMY_HASH, password)
    accepted = user is not None and matches and user.active
    begin_write(db.session)
    if accepted:
        audit.record(db.session, "login", "success", user_id=user.id, role=user.role)
    else:
        audit.record(db.session, "login", "failed", detail=f"username={username[:64]}")
    db.session.commit()
    return user if accepted else None


def password_matches(user: User, password: str) -> bool:
    """`user`'s password is `password`, checked holding no lock (as check_credentials does)."""
    db.session.commit()
    return check_password_hash(user.password_hash, password)


def hashed_password(password: str) -> str:
    """A new password's hash (~0.1 s), made holding no lock: the request's transaction (which
    auth.protect_writes began with SQLite's write lock) is ended first; the caller takes the lock
    again for the write that stores it."""
    db.session.commit()
    return generate_password_hash(password)


def log_in(user: User) -> None:
    """Start a login: recorded server-side, so it can be ended (log_out, end_logins)."""
    login = LoginSession(id=secrets.token_hex(16), user_id=user.id)
    begin_write(db.session)
    db.session.add(login)
    db.session.commit()
    login_user(user)
    session[SESSION_KEY] = login.id


def log_out() -> None:
    """End this login: a copy of the cookie no longer works either."""
    login = session.pop(SESSION_KEY, None)
    if isinstance(login, str):
        begin_write(db.session)
        db.session.execute(update(LoginSession).where(LoginSession.id == login).values(ended_at=utcnow()))
        db.session.commit()
    logout_user()


def end_logins(user: User, revoke_tokens: bool = True) -> None:
    """End every login of this user, in the caller's transaction: an admin's password reset or a
    deactivation (and the user's own password change, with revoke_tokens=False).

    An admin's reset or a deactivation revokes the user's API tokens too: a token minted by a
    session that should have ended (a stolen cookie) must not outlive it, nor come back when the
    user is reactivated. The user's own password change keeps their tokens: they know of it, and
    their scripts go on (docs/api.md); they revoke a token themselves."""
    now = utcnow()
    db.session.execute(
        update(LoginSession)
        .where(LoginSession.user_id == user.id, LoginSession.ended_at.is_(None))
        .values(ended_at=now)
    )
    if revoke_tokens:
        db.session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=now)
        )


class TokenRefused(Exception):
    """An API token that does not let anyone in; the message says why, never the token."""


# Bearer tokens found good in the last few seconds, by their hash: a script, a dashboard or the MCP
# client calling many times a second costs no query for who it is. A revocation, deactivation or
# change of role applies at once in every worker of this server: forget_tokens touches a file in
# the instance folder that each request looks at (one stat); on other hosts sharing the database,
# and for a request racing the change, within TOKEN_CHECK_SECONDS. An expiry applies on the dot.
TOKEN_CHECK_SECONDS = 5.0
_CHANGED_FILE = "tokens-changed"


@dataclass(frozen=True)
class _GoodToken:
    user: dict  # the user's columns as read, for a copy that is the session's own
    token_id: int
    scopes: frozenset[str]
    expires_at: datetime | None
    last_used_at: datetime | None
    checked_at: float  # time.monotonic()


_GOOD_TOKENS: dict[str, _GoodToken] = {}
_GOOD_TOKENS_LOCK = threading.Lock()
_changes_seen: list[tuple[int, int] | None] = [None]  # the marker as last seen: (inode, mtime ns)


def _marker() -> ChangeMarker:
    return ChangeMarker(current_app.instance_path, _CHANGED_FILE)


def forget_tokens() -> None:
    """Check every token against the database again, in every worker: a token, a user or a role
    changed."""
    _marker().mark()
    with _GOOD_TOKENS_LOCK:
        _GOOD_TOKENS.clear()


def _forget_if_changed() -> None:
    changed = _marker().current()
    if changed is not None and changed != _changes_seen[0]:
        with _GOOD_TOKENS_LOCK:
            _GOOD_TOKENS.clear()
            _changes_seen[0] = changed


@dataclass(frozen=True)
class Bearer:
    """Who a usable API token stands for, and what it may be used for."""

    user: User
    scopes: frozenset[str]


def user_for_token(plain: str, recently_checked: bool = True) -> User:
    """The user an API token stands for, or TokenRefused (authenticate_token)."""
    return authenticate_token(plain, recently_checked).user


def agent_user(plain: str, recently_checked: bool = True) -> User:
    """The user an MCP client acts as (INVENTORY_AI_MCP_TOKEN, every stdio request), or
    TokenRefused: the token is unusable, lacks `chat`, or has `decide` or `admin` (TOKEN_RULES'
    AGENT; /mcp is held to it by check_token_scopes)."""
    bearer = authenticate_token(plain, recently_checked)
    refusal = scope_refusal(AGENT, bearer.scopes)
    if refusal is not None:
        raise TokenRefused(refusal[1])
    return bearer.user


def authenticate_token(plain: str, recently_checked: bool = True) -> Bearer:
    """The user an API token stands for (a bearer header, the MCP server's INVENTORY_AI_MCP_TOKEN)
    and its scopes, or TokenRefused: unknown, revoked, expired, or its user deactivated.
    `recently_checked=False` reads the database every time (the stdio MCP server: one agent, every
    call checked)."""
    key = hash_token(plain)
    now = utcnow()
    _forget_if_changed()
    good = _GOOD_TOKENS.get(key) if recently_checked else None
    if (
        good is not None
        and time.monotonic() - good.checked_at < TOKEN_CHECK_SECONDS
        and (good.expires_at is None or good.expires_at > now)
    ):
        # As if loaded: no query, nothing to write. The session's own copy if it holds one already.
        held = db.session.identity_map.get(identity_key(User, good.user["id"]))
        user = held if held is not None else adopted(db.session, User, [good.user])[0]
        _stamp_last_used(key, good.token_id, good.last_used_at, now)
        return Bearer(user, good.scopes)
    token = db.session.scalar(
        select(ApiToken)
        .options(joinedload(ApiToken.user))  # one round trip for the token and its user
        .where(ApiToken.token_hash == hash_token(plain))
    )
    now = utcnow()
    if token is None:
        raise TokenRefused("not a known API token")
    if token.revoked_at is not None:
        raise TokenRefused(f"the API token {token.prefix}… was revoked")
    if not token.usable(now):
        raise TokenRefused(f"the API token {token.prefix}… expired")
    if not token.user.active:
        raise TokenRefused(f"the user of the API token {token.prefix}… is deactivated")
    user = token.user
    scopes = token.scope_set
    with _GOOD_TOKENS_LOCK:
        if len(_GOOD_TOKENS) >= 10_000:  # bounded: many tokens in turn only cost their queries
            _GOOD_TOKENS.clear()
        _GOOD_TOKENS[key] = _GoodToken(
            {c.key: getattr(user, c.key) for c in User.__mapper__.column_attrs},
            token.id,
            scopes,
            token.expires_at,
            token.last_used_at,
            time.monotonic(),
        )
    _stamp_last_used(key, token.id, token.last_used_at, now)
    return Bearer(user, scopes)


def _stamp_last_used(key: str, token_id: int, last_used_at: datetime | None, now: datetime) -> None:
    """A token's "last used", to the minute. Stamped in its own short write, so this request's
    session stays a reader; the read is ended first, so a thread never holds two pooled
    connections (64 such threads waiting for a second connection each would drain the pool)."""
    if last_used_at is not None and now - last_used_at < LAST_USED_RESOLUTION:
        return
    db.session.commit()
    with write_transaction(db.engine) as stamp:
        stamp.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=now))
    with _GOOD_TOKENS_LOCK:
        if (good := _GOOD_TOKENS.get(key)) is not None:
            _GOOD_TOKENS[key] = replace(good, last_used_at=now)


def authenticated_user() -> User | None:
    return current_user if current_user.is_authenticated else None


def issue_token(
    user: User, name: str, valid_days: int | None = 90, scopes=DEFAULT_SCOPES
) -> tuple[ApiToken, str]:
    """Create a token; the plain value is returned once and only its hash is stored. `scopes`: what
    it may be used for (TOKEN_SCOPES; issue_scopes checks what a request asks for)."""
    unknown = set(scopes) - set(TOKEN_SCOPES)
    if unknown or not scopes or (ADMIN in scopes and not user.is_admin):
        raise ValueError(f"scopes {sorted(scopes)} are not for a token of {user.username}")
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user=user,
        name=name,
        token_hash=hash_token(plain),
        prefix=plain[:12],
        scopes=scope_text(scopes),
        expires_at=utcnow() + timedelta(days=valid_days) if valid_days else None,
    )
    db.session.add(token)
    return token, plain
