"""Stock figures, the ledger history, and booking a movement (with the user's confirmation)."""

from __future__ import annotations

from datetime import date

from inventory_ai.assistant.tools.base import ToolContext, ToolExecutor
from inventory_ai.assistant.tools.schemas import model_parameters
from inventory_ai.models import MOVEMENT_TYPES
from inventory_ai.services import booking_effect, bookings, ledger, shown, sites, stats
from inventory_ai.services.bookings import MOVEMENTS_BY_ROLE, BookingRequest, BookingSchema
from inventory_ai.services.catalog import find_category, find_material
from inventory_ai.services.units import fmt_quantity


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def _scope(context: ToolContext, arguments: dict) -> stats.Scope:
    scope = stats.Scope()
    if arguments.get("warehouse"):
        scope.warehouse_id = sites.checked_warehouse(
            context.session, context.sites, arguments["warehouse"]
        ).id
    if arguments.get("category"):
        scope.category_id = find_category(context.session, arguments["category"]).id
    return scope


class GetInventoryStats(ToolExecutor):
    name = "get_inventory_stats"
    bounded = True
    labels = ("库存统计", "Stock totals")
    help = ("库存统计与库存金额", "stock totals and stock value")
    description = "Stock value and counts by warehouse and category."
    parameters = {
        "type": "object",
        "properties": {"warehouse": {"type": "string"}, "category": {"type": "string"}},
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        return stats.inventory_stats(context.session, _scope(context, arguments), sites=context.sites)


class ListLowStock(ToolExecutor):
    name = "list_low_stock"
    bounded = True
    labels = ("低库存", "Low stock")
    help = (
        "列出低于补货点的原料，例如“哪些原料库存不足”",
        'list what is running low, e.g. "what is running low?"',
    )
    description = "Materials below their reorder point, most urgent first."
    parameters = {
        "type": "object",
        "properties": {
            "warehouse": {"type": "string"},
            "category": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        result = stats.low_stock(
            context.session, _scope(context, arguments), limit=arguments.get("limit", 10), sites=context.sites
        )
        result["more_available"] = result["total"] > len(result["items"])
        return result


class GetStockMovements(ToolExecutor):
    name = "get_stock_movements"
    bounded = True
    labels = ("出入库记录", "Stock movements")
    help = (
        "查询出入库记录，例如“最近7天高筋面粉的出库记录”",
        'stock movement history, e.g. "flour movements last 7 days"',
    )
    description = "Stock movements, newest first, with totals in and out; last 30 days unless given."
    parameters = {
        "type": "object",
        "properties": {
            "material": {"type": "string"},
            "warehouse": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 366},
            "since": {"type": "string", "format": "date"},
            "until": {"type": "string", "format": "date", "description": "included"},
            "movement_type": {"enum": list(MOVEMENT_TYPES)},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        session = context.session
        flt = stats.MovementFilter(
            days=arguments.get("days", 30),
            movement_type=arguments.get("movement_type"),
            since=_day(arguments.get("since")),
            until=_day(arguments.get("until")),
        )
        if arguments.get("material"):
            flt.material_id = find_material(session, arguments["material"]).id
        if arguments.get("warehouse"):
            flt.warehouse_id = sites.checked_warehouse(session, context.sites, arguments["warehouse"]).id
        limit = arguments.get("limit", 10)
        found = stats.movements(session, flt, limit=limit, sites=context.sites)
        return {
            "total": found["total"],
            "quantity_in": fmt_quantity(found["quantity_in"]),
            "quantity_out": fmt_quantity(found["quantity_out"]),
            "movements": [
                {
                    "date": shown.plant_day(mv.created_at).isoformat(),  # the plant's day, not UTC's
                    **stats.movement_row(mv),
                    "level_after": fmt_quantity(mv.level_after),
                    "reason": mv.reason,
                }
                for mv in found["rows"]
            ],
            "more_available": found["total"] > limit,
        }


class RecordStockMovement(ToolExecutor):
    name = "record_stock_movement"
    labels = ("库存变动", "Stock booking")
    help = (
        "登记出入库（需您确认），例如“高筋面粉出库20公斤”",
        'book stock in or out (you confirm first), e.g. "book out 20 kg M001"',
    )
    description = (
        "Book stock in, out, a stocktake adjustment (quantity = counted level) or a transfer "
        "(to_warehouse). The user confirms before it is booked."
    )
    parameters = model_parameters(BookingSchema())  # the booking's fields, defined once
    read_only = False
    timeout_seconds = 15.0
    allowed_roles = frozenset(MOVEMENTS_BY_ROLE)

    def requires_confirmation(self, arguments: dict) -> bool:
        return True

    def permission_note(self, role: str) -> str | None:
        allowed = MOVEMENTS_BY_ROLE.get(role)
        if allowed and allowed != set(MOVEMENT_TYPES):
            return " and ".join(sorted(allowed)) + " only"
        return None

    def _request(self, arguments: dict, context: ToolContext) -> BookingRequest:
        """The booking asked for, checked (fields, role), under one key per tool call however often
        it is retried or re-approved; both its ends in the user's warehouses as they are now
        (proposed, approved or signed off)."""
        request = bookings.load(arguments, context.user_id, _booking_key(context))
        bookings.may_book(context.role, request.movement_type)
        sites.check_booking(context.session, context.sites, request.warehouse, request.to_warehouse)
        return request

    def describe_call(self, arguments: dict, context: ToolContext) -> str:
        return ledger.describe_booking(context.session, self._request(arguments, context), context.language)

    def describe_for(self, arguments: dict, session, language: str) -> str:
        request = bookings.load(arguments, None, None)
        return ledger.describe_booking(session, request, language, check_stock=False)

    def value_cny(self, arguments: dict, context: ToolContext):
        return booking_effect.booking_value(context.session, self._request(arguments, context))

    def effect(self, arguments: dict, context: ToolContext, visible=None) -> dict:
        return booking_effect.booking_effect(
            context.session, bookings.load(arguments, context.user_id, None), visible
        )

    def recorded_outcome(self, arguments: dict, context: ToolContext):
        booking = ledger.recorded_booking(context.session, _booking_key(context))
        return booking.as_dict() if booking is not None else None

    def execute(self, arguments: dict, context: ToolContext):
        request = self._request(arguments, context)
        return ledger.book(context.engine, request).as_dict()


def _booking_key(context: ToolContext) -> str:
    return f"chat:{context.tool_call_id}"
