"""Raising a purchase request."""

from __future__ import annotations

from inventory_ai.assistant.tools.base import ToolContext, ToolExecutor
from inventory_ai.models import Role, User
from inventory_ai.services.purchasing import create_purchase_request
from inventory_ai.services.units import fmt_quantity


class CreatePurchaseRequest(ToolExecutor):
    name = "create_purchase_request"
    labels = ("采购申请", "Purchase request")
    help = (
        "提交采购申请，例如“申请采购低筋面粉500公斤”",
        'raise a purchase request, e.g. "purchase 500 kg M002"',
    )
    description = "Raise a purchase request for a material."
    parameters = {
        "type": "object",
        "properties": {
            "material": {"type": "string", "minLength": 1},
            "quantity": {"type": "number", "exclusiveMinimum": 0},
            "unit": {"type": "string"},
            "needed_by": {"type": "string", "format": "date"},
            "note": {"type": "string", "maxLength": 2000},
        },
        "required": ["material", "quantity"],
        "additionalProperties": False,
    }
    read_only = False
    allowed_roles = frozenset({Role.WAREHOUSE_MANAGER.value, Role.PURCHASER.value, Role.ADMIN.value})

    def execute(self, arguments: dict, context: ToolContext):
        user = context.session.get(User, context.user_id)
        request = create_purchase_request(
            context.session,
            user,
            arguments["material"],
            arguments["quantity"],
            unit=arguments.get("unit"),
            needed_by=arguments.get("needed_by"),
            note=arguments.get("note"),
        )
        return {
            "purchase_request_id": request.id,
            "material": f"{request.material.name_zh} ({request.material.code})",
            "quantity": fmt_quantity(request.quantity),
            "unit": request.material.unit,
            "needed_by": request.needed_by.isoformat() if request.needed_by else None,
            "status": request.status,
        }
