"""Admin: usage figures per tool, per answer and per user and day (tokens, estimated cost)."""

from __future__ import annotations

from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from inventory_ai.api.admin.common import admins_only
from inventory_ai.extensions import db
from inventory_ai.services.metrics import metrics

blp = Blueprint("admin_metrics", __name__, url_prefix="/api/v1/admin", description="Admin: metrics")
admins_only(blp)


class MetricsQuery(Schema):
    days = fields.Integer(load_default=30, validate=validate.Range(min=1, max=366))


class ToolMetricsSchema(Schema):
    tool = fields.String()
    calls = fields.Integer()
    success_rate = fields.Float()
    p50_ms = fields.Integer(allow_none=True)
    p95_ms = fields.Integer(allow_none=True)


COST = "estimated CNY at INVENTORY_AI_MODEL_PRICES; null when a model has no price"


class ModelUsageSchema(Schema):
    model = fields.String()
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    cost_cny = fields.Float(allow_none=True, metadata={"description": COST})


class UserDayUsageSchema(Schema):
    user = fields.String()
    day = fields.String(metadata={"description": "the plant's day (INVENTORY_AI_TIMEZONE), YYYY-MM-DD"})
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    cost_cny = fields.Float(allow_none=True, metadata={"description": COST})
    models = fields.List(fields.Nested(ModelUsageSchema))


class MetricsSchema(Schema):
    days = fields.Integer()
    tools = fields.List(fields.Nested(ToolMetricsSchema))
    rounds_per_answer = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        metadata={"description": "number of answers by their number of tool rounds"},
    )
    tokens_per_user_per_day = fields.List(fields.Nested(UserDayUsageSchema))


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.arguments(MetricsQuery, location="query")
    @blp.response(200, MetricsSchema)
    def get(self, args):
        """Per tool: calls, success rate, p50/p95 ms; rounds per answer; tokens and estimated cost
        (CNY) per user per day, by model."""
        prices = current_app.extensions["inventory_ai.config"].model_prices
        return metrics(db.session, args["days"], prices)
