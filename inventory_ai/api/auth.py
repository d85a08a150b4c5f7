"""Session login for scripts and the web form's JavaScript; API tokens for scripts."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView
from flask_login import login_required, login_user, logout_user
from flask_smorest import Blueprint
from flask_wtf.csrf import generate_csrf
from marshmallow import Schema, fields, validate

from inventory_ai.auth import authenticated_user
from inventory_ai.errors import error_response
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.services import audit

blp = Blueprint("api_auth", __name__, url_prefix="/api/v1/auth", description="Log in and out")


class LoginSchema(Schema):
    username = fields.String(required=True, validate=validate.Length(min=1, max=64))
    password = fields.String(required=True, load_only=True, validate=validate.Length(min=1, max=256))


class LoginResultSchema(Schema):
    username = fields.String()
    role = fields.String()
    csrf_token = fields.String(metadata={"description": "send as X-CSRFToken on cookie-authenticated writes"})


def check_credentials(username: str, password: str) -> User | None:
    user = db.session.query(User).filter_by(username=username).one_or_none()
    if user is None or not user.active or not user.check_password(password):
        audit.record(db.session, "login", "failed", detail=f"username={username[:64]}")
        db.session.commit()
        return None
    audit.record(db.session, "login", "success", user_id=user.id, role=user.role)
    db.session.commit()
    return user


@blp.route("/login")
class Login(MethodView):
    @blp.arguments(LoginSchema)
    @blp.response(200, LoginResultSchema)
    @blp.alt_response(401, description="bad credentials")
    def post(self, body):
        user = check_credentials(body["username"], body["password"])
        if user is None:
            return error_response(401, "invalid_credentials", "wrong username or password")
        login_user(user)
        return {"username": user.username, "role": user.role, "csrf_token": generate_csrf()}


@blp.route("/logout")
class Logout(MethodView):
    @blp.response(204)
    @login_required
    def post(self):
        logout_user()


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, LoginResultSchema)
    @login_required
    def get(self):
        user = authenticated_user()
        return jsonify(username=user.username, role=user.role, csrf_token=generate_csrf())
