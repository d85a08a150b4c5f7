"""Admin-only tools."""

from __future__ import annotations

from inventory_ai.assistant.tools.base import ToolContext, ToolExecutor
from inventory_ai.models import Role
from inventory_ai.services.intents import create_intent


class CreateNewIntent(ToolExecutor):
    name = "create_new_intent"
    labels = ("新意图", "New intent")
    help = ("教助手新的说法（管理员）", "teach the assistant new phrases (admins)")
    description = "Admin: teach the offline assistant new keywords that route to a tool."
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{1,63}$"},
            "keywords": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": 30,
            },
            "tool_name": {"type": "string"},
            "default_arguments": {"type": "object"},
        },
        "required": ["name", "keywords", "tool_name"],
        "additionalProperties": False,
    }
    read_only = False
    allowed_roles = frozenset({Role.ADMIN.value})

    def execute(self, arguments: dict, context: ToolContext):
        intent = create_intent(
            context.session,
            arguments["name"],
            arguments["keywords"],
            arguments["tool_name"],
            known_tools=context.tool_names,
            default_arguments=arguments.get("default_arguments"),
            user_id=context.user_id,
        )
        return {
            "intent_id": intent.id,
            "name": intent.name,
            "tool_name": intent.tool_name,
            "keywords": intent.keywords,
        }
