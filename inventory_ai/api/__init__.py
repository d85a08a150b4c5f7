"""JSON API under /api/v1 (flask-smorest: marshmallow schemas, OpenAPI at /api/openapi.json)."""

from flask import Flask
from flask_smorest import Api

api = Api()


def init_api(app: Flask) -> None:
    from inventory_ai.api import auth, chat

    api.init_app(app)
    api.register_blueprint(auth.blp)
    api.register_blueprint(chat.blp)
