"""A person signing in: credentials checked (in even time, holding no lock), a login recorded
server-side so it can be ended, passwords hashed."""

from __future__ import annotations

import secrets

from flask import session
from flask_login import current_user, login_user, logout_user
from sqlalchemy import select, update
from werkzeug.security import check_password_hash, generate_password_hash

from inventory_ai.database import begin_write
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken, LoginSession, User, utcnow
from inventory_ai.services import audit

SESSION_KEY = "_login"  # the login's id, in the signed session cookie
# Hashed like a real password (same method and cost), checked when the name is unknown.
_DUMMY_HASH = generate_password_hash("not a password: evens out the time of a failed login")


def check_credentials(username: str, password: str) -> User | None:
    """The active user with this name and password, or None; either way an audit event.

    Every refusal costs the same: the password is checked against the user's hash, or a dummy one
    for a name that does not exist, before anything else (whether the user is active) is looked
    at, so timing tells neither which names exist nor which are deactivated. The hashing (~0.1 s)
    holds no lock: the request's write transaction (auth.pipeline.protect_writes) is ended first, and the
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
    auth.pipeline.protect_writes began with SQLite's write lock) is ended first; the caller takes the lock
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


def authenticated_user() -> User | None:
    """The caller, or None: the user itself, not flask-login's `current_user` proxy, through which
    every attribute the view and the loop read after this would be looked up again (each a few
    werkzeug and flask-login calls: 4 of a chat message's 10)."""
    user = current_user._get_current_object()
    return user if user is not None and user.is_authenticated else None
