"""Who is calling, for every request: the session cookie's login or a bearer token, checked
before any view runs; CSRF for every cookie-authenticated write (form field or X-CSRFToken
header; bearer-token requests carry no ambient credential and need none); a token's scopes
against TOKEN_RULES; the request's write transaction begun up front."""

from __future__ import annotations

from flask import Flask, current_app, redirect, request, session, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from sqlalchemy import select

from inventory_ai.auth.logins import SESSION_KEY
from inventory_ai.auth.scopes import PUBLIC, SCOPES_KEY, request_token_scopes, scope_refusal, token_rule
from inventory_ai.auth.tokens import TokenRefused, authenticate_token
from inventory_ai.database import begin_write
from inventory_ai.errors import error_response
from inventory_ai.extensions import csrf, db, login_manager
from inventory_ai.models import LoginSession, User

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
    req.environ[SCOPES_KEY] = bearer.scopes
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
