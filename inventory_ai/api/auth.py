"""Session login for scripts and the web form's JavaScript; API tokens for scripts."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView
from flask_login import login_required
from flask_smorest import Blueprint
from flask_wtf.csrf import generate_csrf
from marshmallow import Schema, ValidationError, fields, validate
from sqlalchemy import select

from inventory_ai.api.fields import UtcDateTime
from inventory_ai.auth import (
    authenticated_user,
    check_credentials,
    end_logins,
    forget_tokens,
    hashed_password,
    issue_scopes,
    issue_token,
    log_in,
    log_out,
    password_matches,
    request_token_scopes,
)
from inventory_ai.database import begin_write
from inventory_ai.errors import NotFound, error_response
from inventory_ai.extensions import db, login_limit, password_change_limit
from inventory_ai.models import TOKEN_SCOPES, ApiToken, utcnow
from inventory_ai.services import audit, sites

blp = Blueprint("api_auth", __name__, url_prefix="/api/v1/auth", description="Log in and out")


class LoginSchema(Schema):
    username = fields.String(required=True, validate=validate.Length(min=1, max=64))
    password = fields.String(required=True, load_only=True, validate=validate.Length(min=1, max=256))


class LoginResultSchema(Schema):
    username = fields.String()
    role = fields.String()
    csrf_token = fields.String(metadata={"description": "send as X-CSRFToken on cookie-authenticated writes"})


class MeSchema(LoginResultSchema):
    warehouses = fields.List(
        fields.String(),
        allow_none=True,
        metadata={"description": "the warehouse codes you work in; null: every warehouse"},
    )


@blp.route("/login")
class Login(MethodView):
    @blp.arguments(LoginSchema)
    @blp.response(200, LoginResultSchema)
    @blp.alt_response(401, description="bad credentials")
    @blp.alt_response(429, description="too many failed attempts; see Retry-After")
    @login_limit
    def post(self, body):
        user = check_credentials(body["username"], body["password"])
        if user is None:
            return error_response(401, "invalid_credentials", "wrong username or password")
        log_in(user)
        return {"username": user.username, "role": user.role, "csrf_token": generate_csrf()}


@blp.route("/logout")
class Logout(MethodView):
    @blp.response(204)
    @login_required
    def post(self):
        log_out()


class PasswordChangeSchema(Schema):
    current_password = fields.String(required=True, load_only=True, validate=validate.Length(min=1, max=256))
    new_password = fields.String(required=True, load_only=True, validate=validate.Length(min=8, max=256))


@blp.route("/password")
class Password(MethodView):
    @blp.arguments(PasswordChangeSchema)
    @blp.response(204)
    @blp.alt_response(401, description="the current password is wrong")
    @blp.alt_response(429, description="too many wrong current passwords; see Retry-After")
    @login_required
    @password_change_limit
    def post(self, body):
        """Change your own password: every session of yours ends (other browsers, copied cookies);
        this one goes on as a new login. Your API tokens stay (revoke them with DELETE
        /tokens/{id}); an admin's reset or a deactivation revokes them. A wrong current password
        counts as a failed login of yours (the login limits): a stolen session cannot guess it."""
        user = authenticated_user()
        if not password_matches(user, body["current_password"]):
            begin_write(db.session)
            audit.record(db.session, "password_changed", "failed", user_id=user.id, role=user.role)
            db.session.commit()
            return error_response(401, "invalid_credentials", "the current password is wrong")
        new_hash = hashed_password(body["new_password"])  # before the write lock, as logins do
        begin_write(db.session)
        user.password_hash = new_hash
        end_logins(user, revoke_tokens=False)
        audit.record(db.session, "password_changed", "success", user_id=user.id, role=user.role)
        db.session.commit()
        log_in(user)


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, MeSchema)
    @login_required
    def get(self):
        user = authenticated_user()
        return jsonify(
            username=user.username,
            role=user.role,
            warehouses=sites.codes_of(db.session, user),
            csrf_token=generate_csrf(),
        )


# --- API tokens for scripts: issued to the logged-in user, shown once, stored hashed ----------


def _known_scopes(scopes: list[str]) -> None:
    unknown = [s for s in scopes if s not in TOKEN_SCOPES]
    if unknown:
        raise ValidationError(
            f"unknown scope {unknown[0]!r}; the scopes are {', '.join(TOKEN_SCOPES)}"
            if len(unknown) == 1
            else f"unknown scopes {', '.join(map(repr, unknown))}; the scopes are {', '.join(TOKEN_SCOPES)}"
        )
    if not scopes:
        raise ValidationError(f"at least one of {', '.join(TOKEN_SCOPES)}")


class TokenCreateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    valid_days = fields.Integer(
        strict=True, load_default=90, allow_none=True, validate=validate.Range(min=1, max=3650)
    )
    scopes = fields.List(
        fields.String(validate=validate.Length(max=32)),
        load_default=None,
        validate=[validate.Length(max=len(TOKEN_SCOPES) * 2), _known_scopes],
        metadata={
            "description": "what the token may be used for: read, chat, decide, admin (admins only). "
            'Default ["read", "chat"]: `decide` (approving bookings) and `admin` only when asked for'
        },
    )


class TokenSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    prefix = fields.String()
    scopes = fields.List(fields.String(), attribute="scope_list")
    created_at = UtcDateTime()
    expires_at = UtcDateTime(allow_none=True)
    revoked_at = UtcDateTime(allow_none=True)
    last_used_at = UtcDateTime(allow_none=True)


class IssuedTokenSchema(TokenSchema):
    token = fields.String(metadata={"description": "shown once; only its hash is stored"})


@blp.route("/tokens")
class Tokens(MethodView):
    @blp.response(200, TokenSchema(many=True))
    @login_required
    def get(self):
        user = authenticated_user()
        return db.session.scalars(
            select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)
        ).all()

    @blp.arguments(TokenCreateSchema)
    @blp.response(201, IssuedTokenSchema)
    @blp.alt_response(403, description="a token asked for a scope it does not have itself")
    @login_required
    def post(self, body):
        """Issue a token: shown once. `scopes` defaults to read and chat; `decide` and `admin` are
        given only when asked for (docs/api.md, "API token scopes"). A token may issue tokens of at
        most its own scopes."""
        user = authenticated_user()
        scopes = issue_scopes(user, body["scopes"], request_token_scopes())
        token, plain = issue_token(user, body["name"], body["valid_days"], scopes)
        db.session.commit()
        shown = {field.attribute or name for name, field in TokenSchema().fields.items()}
        return {**{name: getattr(token, name) for name in shown}, "token": plain}


@blp.route("/tokens/<int:token_id>")
class TokenResource(MethodView):
    @blp.response(204)
    @login_required
    def delete(self, token_id):
        token = db.session.get(ApiToken, token_id)
        if token is None or token.user_id != authenticated_user().id:
            raise NotFound("no such token")
        token.revoked_at = token.revoked_at or utcnow()
        db.session.commit()
        forget_tokens()
