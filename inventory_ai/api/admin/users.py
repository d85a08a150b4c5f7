"""Admin: user accounts (create, change role or deactivate, reset a password)."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select

from inventory_ai.api.admin.common import Order, PageArgs, admin_action, admins_only, page_of, paginate
from inventory_ai.api.fields import UtcDateTime
from inventory_ai.assistant.extension import decisions
from inventory_ai.auth import authenticated_user, end_logins, forget_tokens, hashed_password
from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.extensions import db
from inventory_ai.models import ROLES, User, utcnow
from inventory_ai.services import sites

blp = Blueprint("admin_users", __name__, url_prefix="/api/v1/admin", description="Admin: users")
admins_only(blp)

PASSWORD = validate.Length(min=8, max=256)


class UserSchema(Schema):
    id = fields.Integer()
    username = fields.String()
    role = fields.String()
    active = fields.Boolean()
    # The warehouse codes the user works in; null: every warehouse (docs/permissions.md, "Warehouses").
    warehouses = fields.List(fields.String(), allow_none=True)
    created_at = UtcDateTime()


WAREHOUSES = fields.List(
    fields.String(validate=validate.Length(min=1, max=16)),
    allow_none=True,
    validate=validate.Length(max=100),
    metadata={"description": 'warehouse codes, e.g. ["WH02"]; null: every warehouse'},
)


class UserCreateSchema(Schema):
    username = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z0-9_.-]{2,64}$"))
    password = fields.String(required=True, load_only=True, validate=PASSWORD)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    warehouses = WAREHOUSES


class UserUpdateSchema(Schema):
    role = fields.String(validate=validate.OneOf(ROLES))
    active = fields.Boolean()
    warehouses = WAREHOUSES


class PasswordSchema(Schema):
    password = fields.String(required=True, load_only=True, validate=PASSWORD)


class UserQuery(PageArgs):
    role = fields.String(validate=validate.OneOf(ROLES))
    active = fields.Boolean()


def _user(user_id: int) -> User:
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFound(f"no user {user_id}")
    return user


@blp.route("/users")
class Users(MethodView):
    @blp.arguments(UserQuery, location="query")
    @blp.response(200, page_of(UserSchema))
    def get(self, args):
        stmt = select(User)
        if "role" in args:
            stmt = stmt.where(User.role == args["role"])
        if "active" in args:
            stmt = stmt.where(User.active.is_(args["active"]))
        return paginate(db.session, stmt, args, Order((User.id,), False, lambda u: (u.id,)))

    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    def post(self, body):
        password_hash = hashed_password(body["password"])  # slow on purpose: before the write lock
        begin_write(db.session)
        if db.session.scalar(select(User.id).where(User.username == body["username"])) is not None:
            raise Conflict(f"user {body['username']!r} already exists")
        user = User(
            username=body["username"],
            role=body["role"],
            password_hash=password_hash,
            warehouses=sites.clean_codes(db.session, body.get("warehouses")),
        )
        db.session.add(user)
        admin_action("user_created", user.username)
        db.session.commit()
        return user


@blp.route("/users/<int:user_id>")
class UserResource(MethodView):
    @blp.response(200, UserSchema)
    def get(self, user_id):
        return _user(user_id)

    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    def patch(self, body, user_id):
        begin_write(db.session)
        user = _user(user_id)
        if user.id == authenticated_user().id and (
            body.get("active") is False or body.get("role", user.role) != user.role
        ):
            raise InvalidInput("admins cannot deactivate or demote themselves; ask another admin")
        narrowed = False
        if "warehouses" in body:  # read afresh on the user's next request (services/sites.py)
            body["warehouses"] = sites.clean_codes(db.session, body["warehouses"])
            narrowed = sites.narrows(db.session, user.warehouses, body["warehouses"])
            if narrowed:
                user.warehouses_narrowed_at = utcnow()  # older conversations close (conversations.py)
        for key, value in body.items():
            setattr(user, key, value)
        if body.get("active") is False:
            end_logins(user)  # deactivated: every session ends now, not when it expires
        admin_action("user_changed", user.username, body)
        db.session.commit()
        forget_tokens()  # a new role or a deactivation applies to the user's tokens at once
        if narrowed:  # what waited for their own decision in the closed conversations ends
            decisions().withdraw_closed(db.session, user)
        return user


@blp.route("/users/<int:user_id>/password")
class UserPassword(MethodView):
    @blp.arguments(PasswordSchema)
    @blp.response(204)
    def post(self, body, user_id):
        password_hash = hashed_password(body["password"])  # slow on purpose: before the write lock
        begin_write(db.session)
        user = _user(user_id)
        user.password_hash = password_hash
        end_logins(user)
        admin_action("password_reset", user.username)
        db.session.commit()
        forget_tokens()  # again once committed: a token checked meanwhile saw it still good
