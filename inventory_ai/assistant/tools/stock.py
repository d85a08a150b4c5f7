"""Stock figures, the ledger history, and booking a movement (with the user's confirmation)."""

from __future__ import annotations

from inventory_ai.assistant.tools.base import PermissionDenied, ToolContext, ToolExecutor
from inventory_ai.models import Role
from inventory_ai.services import ledger, stats
from inventory_ai.services.catalog import find_category, find_material, find_warehouse
from inventory_ai.services.units import fmt_quantity

# Staff book goods in and out; adjustments and transfers are a manager's call.
MOVEMENTS_BY_ROLE = {
    Role.WAREHOUSE_STAFF.value: {"inbound", "outbound"},
    Role.WAREHOUSE_MANAGER.value: {"inbound", "outbound", "adjustment", "transfer"},
    Role.ADMIN.value: {"inbound", "outbound", "adjustment", "transfer"},
}


def _scope(context: ToolContext, arguments: dict) -> stats.Scope:
    scope = stats.Scope()
    if arguments.get("warehouse"):
        scope.warehouse_id = find_warehouse(context.session, arguments["warehouse"]).id
    if arguments.get("category"):
        scope.category_id = find_category(context.session, arguments["category"]).id
    return scope


class GetInventoryStats(ToolExecutor):
    name = "get_inventory_stats"
    description = "Stock value and counts by warehouse and category."
    parameters = {
        "type": "object",
        "properties": {"warehouse": {"type": "string"}, "category": {"type": "string"}},
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        return stats.inventory_stats(context.session, _scope(context, arguments))


class ListLowStock(ToolExecutor):
    name = "list_low_stock"
    description = "Materials below their reorder point, most urgent first."
    parameters = {
        "type": "object",
        "properties": {
            "warehouse": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        result = stats.low_stock(
            context.session, _scope(context, arguments), limit=arguments.get("limit", 10)
        )
        result["more_available"] = result["total"] > len(result["items"])
        return result


class GetStockMovements(ToolExecutor):
    name = "get_stock_movements"
    description = "Stock movements, newest first, with totals in and out."
    parameters = {
        "type": "object",
        "properties": {
            "material": {"type": "string"},
            "warehouse": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 366, "description": "default 30"},
            "movement_type": {"enum": ["inbound", "outbound", "adjustment", "transfer"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        session = context.session
        flt = stats.MovementFilter(
            days=arguments.get("days", 30), movement_type=arguments.get("movement_type")
        )
        if arguments.get("material"):
            flt.material_id = find_material(session, arguments["material"]).id
        if arguments.get("warehouse"):
            flt.warehouse_id = find_warehouse(session, arguments["warehouse"]).id
        limit = arguments.get("limit", 10)
        found = stats.movements(session, flt, limit=limit)
        return {
            "total": found["total"],
            "quantity_in": fmt_quantity(found["quantity_in"]),
            "quantity_out": fmt_quantity(found["quantity_out"]),
            "movements": [
                {
                    "date": mv.created_at.date().isoformat(),
                    "code": mv.material.code,
                    "name": mv.material.name_zh,
                    "type": mv.movement_type,
                    "quantity": fmt_quantity(mv.quantity),
                    "unit": mv.material.unit,
                    "warehouse": mv.warehouse.name_zh,
                    "level_after": fmt_quantity(mv.level_after),
                    "reason": mv.reason,
                }
                for mv in found["rows"]
            ],
            "more_available": found["total"] > limit,
        }


class RecordStockMovement(ToolExecutor):
    name = "record_stock_movement"
    description = (
        "Book stock in, out, a stocktake adjustment (quantity = counted level) or a transfer "
        "(to_warehouse). The user confirms before it is booked."
    )
    parameters = {
        "type": "object",
        "properties": {
            "material": {"type": "string", "minLength": 1},
            "warehouse": {"type": "string", "minLength": 1},
            "movement_type": {"enum": ["inbound", "outbound", "adjustment", "transfer"]},
            "quantity": {"type": "number", "minimum": 0},
            "unit": {"type": "string", "description": "kg, g, 斤, L, mL, pcs"},
            "reason": {"type": "string", "minLength": 1, "maxLength": 500},
            "to_warehouse": {"type": "string"},
        },
        "required": ["material", "warehouse", "movement_type", "quantity", "reason"],
        "additionalProperties": False,
    }
    read_only = False
    timeout_seconds = 15.0
    allowed_roles = frozenset(MOVEMENTS_BY_ROLE)

    def requires_confirmation(self, arguments: dict) -> bool:
        return True

    def permission_note(self, role: str) -> str | None:
        allowed = MOVEMENTS_BY_ROLE.get(role)
        if allowed and allowed != set(MOVEMENTS_BY_ROLE[Role.ADMIN.value]):
            return " and ".join(sorted(allowed)) + " only"
        return None

    def _request(self, arguments: dict, context: ToolContext) -> ledger.BookingRequest:
        allowed = MOVEMENTS_BY_ROLE.get(context.role, set())
        if arguments["movement_type"] not in allowed:
            raise PermissionDenied(
                f"role {context.role} may not book {arguments['movement_type']}; "
                f"allowed: {', '.join(sorted(allowed)) or 'none'}"
            )
        # One booking per tool call, however often it is retried or re-approved.
        return ledger.BookingRequest.of(
            arguments, context.user_id, f"chat:{context.message_id}:{context.tool_call_id}"
        )

    def describe_call(self, arguments: dict, context: ToolContext) -> str:
        return ledger.describe_booking(context.session, self._request(arguments, context), context.language)

    def execute(self, arguments: dict, context: ToolContext):
        return ledger.book(context.engine, self._request(arguments, context)).as_dict()
