"""People who use the assistant, their roles, and API tokens for scripts."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from flask_login import UserMixin
from sqlalchemy import JSON, CheckConstraint, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship, validates
from werkzeug.security import check_password_hash, generate_password_hash

from inventory_ai.extensions import db
from inventory_ai.models.base import utcnow


class Role(StrEnum):
    WAREHOUSE_STAFF = "warehouse_staff"
    WAREHOUSE_MANAGER = "warehouse_manager"
    PURCHASER = "purchaser"
    ADMIN = "admin"


ROLES = tuple(r.value for r in Role)
_ROLE_CHECK = "role IN (" + ", ".join(f"'{r}'" for r in ROLES) + ")"


class User(UserMixin, db.Model):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_ROLE_CHECK, name="valid_role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(32))
    active: Mapped[bool] = mapped_column(default=True)
    language: Mapped[str | None] = mapped_column(String(8))
    # The warehouses (codes) this person works in; None: every warehouse. Read afresh on each
    # request by services/sites.py, the one place it is enforced (docs/permissions.md, "Warehouses").
    warehouses: Mapped[list[str] | None] = mapped_column(JSON)
    # When an admin last took a warehouse away from this person: their conversations begun before
    # then may hold that warehouse's figures, so they no longer open (services/conversations.py).
    warehouses_narrowed_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    tokens: Mapped[list[ApiToken]] = relationship(back_populates="user", cascade="all, delete-orphan")

    @validates("role")
    def _check_role(self, _key: str, role: str) -> str:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
        return role

    def set_password(self, password: str) -> None:
        if len(password) < 8:
            raise ValueError("password must be at least 8 characters")
        self.password_hash = generate_password_hash(password)

    def check_password(self, password: str) -> bool:
        return check_password_hash(self.password_hash, password)

    @property
    def is_active(self) -> bool:  # Flask-Login: deactivated users cannot log in
        return self.active

    @property
    def is_admin(self) -> bool:
        return self.role == Role.ADMIN

    def __repr__(self) -> str:  # never the hash
        return f"<User {self.username} {self.role}>"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# What an API token may be used for (docs/api.md, "API token scopes"), in the order they are listed:
# `read` (GET), `chat` (ask, cancel, MCP), `decide` (approve or reject a booking, sign off),
# `admin` (the admin API's writes; admins' tokens only). Which view needs which: auth.TOKEN_RULES.
TOKEN_SCOPES = ("read", "chat", "decide", "admin")


def scope_text(scopes) -> str:
    """Scopes as stored: known ones, space-separated, in TOKEN_SCOPES' order ("read chat")."""
    return " ".join(s for s in TOKEN_SCOPES if s in set(scopes))


class ApiToken(db.Model):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    # Space-separated, as OAuth writes them ("read chat"): see TOKEN_SCOPES and scope_text.
    scopes: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(back_populates="tokens")

    def usable(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())

    @property
    def scope_list(self) -> list[str]:
        return [s for s in TOKEN_SCOPES if s in self.scope_set]


class LoginSession(db.Model):
    """One login (a session cookie): checked on every request, so logging out, a password change or a
    deactivation ends it for real, copies of the cookie included."""

    __tablename__ = "login_sessions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]
