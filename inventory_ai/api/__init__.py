"""JSON API under /api/v1 (flask-smorest: marshmallow schemas, OpenAPI at /api/openapi.json)."""

from flask import Flask
from flask_smorest import Api
from marshmallow import Schema, fields


class ErrorBodySchema(Schema):
    code = fields.String(required=True)
    message = fields.String(required=True)
    details = fields.Raw()


class ErrorSchema(Schema):
    """Every error on /api/: {"error": {"code", "message", "details"?}} (inventory_ai/errors.py)."""

    error = fields.Nested(ErrorBodySchema, required=True)


class InventoryApi(Api):
    ERROR_SCHEMA = ErrorSchema


api = InventoryApi()


def init_api(app: Flask) -> None:
    from inventory_ai.api import approvals, auth, chat
    from inventory_ai.api.admin import init_admin
    from inventory_ai.api.links import LinksPlugin

    api.init_app(app, spec_kwargs={"extra_plugins": [LinksPlugin()]})
    api.register_blueprint(auth.blp)
    api.register_blueprint(chat.blp)
    api.register_blueprint(approvals.blp)
    init_admin(api, app)
