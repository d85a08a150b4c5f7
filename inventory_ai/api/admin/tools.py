"""Admin: the tools, switched on or off and granted to roles at run time."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from inventory_ai.api.admin.common import admin_action, admins_only
from inventory_ai.assistant.extension import manager
from inventory_ai.auth import authenticated_user
from inventory_ai.database import begin_write
from inventory_ai.errors import NotFound
from inventory_ai.extensions import db
from inventory_ai.models import ROLES, ToolSetting, utcnow

blp = Blueprint("admin_tools", __name__, url_prefix="/api/v1/admin", description="Admin: tools")
admins_only(blp)


class ToolSchema(Schema):
    name = fields.String()
    description = fields.String()
    parameters = fields.Dict()
    read_only = fields.Boolean()
    requires_confirmation = fields.Boolean()
    enabled = fields.Boolean()
    allowed_roles = fields.List(fields.String())
    default_enabled = fields.Boolean()
    default_roles = fields.List(fields.String())
    overridden = fields.Boolean()


class ToolUpdateSchema(Schema):
    enabled = fields.Boolean(allow_none=True, metadata={"description": "null: back to the code default"})
    allowed_roles = fields.List(
        fields.String(validate=validate.OneOf(ROLES)),
        allow_none=True,
        metadata={"description": "null: back to the code default"},
    )


def _tool_view(name: str) -> dict:
    registry = manager().registry
    tool = registry.get(name)
    if tool is None:
        raise NotFound(f"no tool {name!r}")
    setting = db.session.get(ToolSetting, name)
    effective = registry.effective(tool, setting)
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "read_only": tool.read_only,
        "requires_confirmation": tool.requires_confirmation({}),
        "enabled": effective.enabled,
        "allowed_roles": sorted(r for r in ROLES if registry.permits(tool, setting, r))
        if effective.enabled
        else sorted(effective.allowed_roles),
        "default_enabled": tool.is_enabled(),
        "default_roles": sorted(r for r in ROLES if registry.permits(tool, None, r)),
        "overridden": effective.overridden,
    }


@blp.route("/tools")
class Tools(MethodView):
    @blp.response(200, ToolSchema(many=True))
    def get(self):
        return [_tool_view(t.name) for t in manager().registry.all()]


@blp.route("/tools/<name>")
class ToolResource(MethodView):
    @blp.response(200, ToolSchema)
    def get(self, name):
        return _tool_view(name)

    @blp.arguments(ToolUpdateSchema)
    @blp.response(200, ToolSchema)
    def patch(self, body, name):
        """Switch a tool or change its roles; effective on every user's next message."""
        _tool_view(name)  # 404 for an unknown tool
        begin_write(db.session)
        setting = db.session.get(ToolSetting, name) or ToolSetting(tool_name=name)
        if "enabled" in body:
            setting.enabled = body["enabled"]
        if "allowed_roles" in body:
            setting.allowed_roles = (
                sorted(set(body["allowed_roles"])) if body["allowed_roles"] is not None else None
            )
        setting.updated_by_id = authenticated_user().id
        setting.updated_at = utcnow()
        db.session.add(setting)
        admin_action("tool_settings_changed", name, body)
        db.session.commit()
        manager().registry.settings_changed()
        return _tool_view(name)
