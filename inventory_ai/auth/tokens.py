"""API tokens: issued (the plain value shown once, its hash kept) and checked (who a bearer token
stands for, and its scopes), with the few seconds a token found good is trusted without a query."""

from __future__ import annotations

import functools
import secrets
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import select, update
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.util import identity_key

from inventory_ai.auth.scopes import ADMIN, AGENT, DEFAULT_SCOPES, scope_refusal
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.database import adopted, write_transaction
from inventory_ai.extensions import db
from inventory_ai.models import TOKEN_SCOPES, ApiToken, User, hash_token, scope_text, utcnow

TOKEN_PREFIX = "iai_"
# "Last used" is kept to the minute: a script calling every second does not write every second.
LAST_USED_RESOLUTION = timedelta(minutes=1)


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
    return _marker_in(current_app.instance_path)


@functools.lru_cache(maxsize=8)
def _marker_in(instance_path: str) -> ChangeMarker:
    """One marker object per instance folder: every request looks at it, and its path is built once."""
    return ChangeMarker(instance_path, _CHANGED_FILE)


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
