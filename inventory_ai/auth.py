"""Who is calling: a session cookie (web form, scripts after /api/v1/auth/login) or a bearer token.

CSRF is enforced here, in one place: every cookie-authenticated write needs the token
(form field or X-CSRFToken header); bearer-token requests carry no ambient credential and need none.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from flask import Flask, redirect, request, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from sqlalchemy import select, update
from sqlalchemy.orm import joinedload

from inventory_ai.database import write_transaction
from inventory_ai.errors import error_response
from inventory_ai.extensions import csrf, db, login_manager
from inventory_ai.models import ApiToken, User, hash_token, utcnow

TOKEN_PREFIX = "iai_"
_WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Reachable without a CSRF token: logging in creates the session the token belongs to.
_CSRF_FREE_ENDPOINTS = {"api_auth.Login"}
# "Last used" is kept to the minute: a script calling every second does not write every second.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def init_app(app: Flask) -> None:
    login_manager.login_view = "web.login"

    @login_manager.user_loader
    def _load_user(user_id: str) -> User | None:
        if request.headers.get("Authorization", "").startswith("Bearer "):
            return None  # an explicit token decides, not a cookie that happens to be there
        user = db.session.get(User, int(user_id)) if user_id.isdigit() else None
        return user if user is not None and user.active else None

    @login_manager.request_loader
    def _load_from_token(req) -> User | None:
        header = req.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return None
        token = db.session.scalar(
            select(ApiToken)
            .options(joinedload(ApiToken.user))  # one round trip for the token and its user
            .where(ApiToken.token_hash == hash_token(header[7:].strip()))
        )
        now = utcnow()
        if token is None or not token.usable(now) or not token.user.active:
            return None
        # Stamped in its own short write, so this request's session stays a reader; the read is
        # ended first, so a thread never holds two pooled connections (64 such threads waiting
        # for a second connection each would drain the pool and wait for ever).
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            db.session.commit()
            with write_transaction(db.engine) as stamp:
                stamp.execute(update(ApiToken).where(ApiToken.id == token.id).values(last_used_at=now))
        return token.user

    @login_manager.unauthorized_handler
    def _unauthorized():
        if request.path.startswith("/api/"):
            return error_response(401, "unauthorized", "log in or send a valid Bearer token")
        return redirect(url_for("web.login", next=request.path))

    @app.before_request
    def protect_writes():
        if request.method not in _WRITE_METHODS or request.endpoint in _CSRF_FREE_ENDPOINTS:
            return None
        if request.headers.get("Authorization", "").startswith("Bearer "):
            return None
        if request.path.startswith("/api/") and not current_user.is_authenticated:
            return None  # no session to ride on: the view answers 401
        if not app.config.get("WTF_CSRF_ENABLED", True):
            return None
        csrf.protect()
        return None

    @app.errorhandler(CSRFError)
    def _csrf_failed(exc: CSRFError):
        if request.path.startswith("/api/"):
            return error_response(400, "csrf_failed", exc.description)
        return exc.description, 400


def authenticated_user() -> User | None:
    return current_user if current_user.is_authenticated else None


def issue_token(user: User, name: str, valid_days: int | None = 90) -> tuple[ApiToken, str]:
    """Create a token; the plain value is returned once and only its hash is stored."""
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user=user,
        name=name,
        token_hash=hash_token(plain),
        prefix=plain[:12],
        expires_at=utcnow() + timedelta(days=valid_days) if valid_days else None,
    )
    db.session.add(token)
    return token, plain
