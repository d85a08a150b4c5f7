"""Finding materials and reading one in detail."""

from __future__ import annotations

from decimal import Decimal

from inventory_ai.assistant.tools.base import ToolContext, ToolExecutor
from inventory_ai.errors import InvalidInput
from inventory_ai.services import shown, sites, stats
from inventory_ai.services.catalog import find_category, find_material
from inventory_ai.services.purchasing import pending_for
from inventory_ai.services.search import SearchFilters, search_materials
from inventory_ai.services.search_index import synonyms_of
from inventory_ai.services.specs import english_spec
from inventory_ai.services.units import fmt_quantity


class SearchMaterials(ToolExecutor):
    name = "search_materials"
    bounded = True
    labels = ("搜索原料", "Material search")
    help = ("查找原料，例如“帮我查找面粉原料”", 'find materials, e.g. "find flour"')
    description = (
        "Find materials by Chinese name, pinyin, English word, code, other name or what they are used "
        "for; with stock."
    )
    parameters = {
        "type": "object",
        "properties": {
            "keyword": {
                "type": "string",
                "minLength": 1,
                "maxLength": 100,
                "description": "面粉, flour, M001; leave out to list what a category or warehouse holds",
            },
            "category": {"type": "string"},
            "warehouse": {"type": "string"},
            "in_stock": {"type": "boolean"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        session = context.session
        if not arguments.get("keyword") and not (arguments.get("category") or arguments.get("warehouse")):
            raise InvalidInput("give a keyword, or a category or warehouse to list what it holds")
        filters = SearchFilters(in_stock=bool(arguments.get("in_stock")), sites=context.sites)
        if arguments.get("category"):
            filters.category_id = find_category(session, arguments["category"]).id
        if arguments.get("warehouse"):
            filters.warehouse_id = sites.checked_warehouse(session, context.sites, arguments["warehouse"]).id
        page = search_materials(
            session, arguments.get("keyword") or "", filters, limit=arguments.get("limit", 10)
        )
        stock = stats.stock_by_material(session, [m.id for m in page.materials], sites=context.sites)
        rows = []
        for m in page.materials:
            held = [(w, q) for w, q in stock.get(m.id, []) if q > 0]
            row = {
                "code": m.code,
                "name": m.name_zh,
                "name_en": m.name_en,
                "stock": fmt_quantity(sum((q for _, q in held), Decimal(0))),
                "unit": m.unit,
            }
            # One warehouse is named; several are listed with their shares.
            if len(held) == 1:
                row["warehouse"] = held[0][0]
            elif held:
                row["warehouses"] = {w: fmt_quantity(q) for w, q in held}
            rows.append(row)
        return {
            "total": page.total if not page.total_capped else f"{page.total}+",
            "materials": rows,
            "more_available": page.more_available,
        }


class GetMaterialDetail(ToolExecutor):
    name = "get_material_detail"
    bounded = True
    labels = ("原料详情", "Material details")
    help = ("查看原料详情，例如“M001 详情”", 'look at one material, e.g. "details of M001"')
    description = (
        "One material in full: what it is and its other names, spec, supplier, cost, reorder point, "
        "stock, recent movements."
    )
    parameters = {
        "type": "object",
        "properties": {"material": {"type": "string", "minLength": 1, "description": "code or name"}},
        "required": ["material"],
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        session = context.session
        m = find_material(session, arguments["material"])
        levels = stats.stock_levels_of(session, m.id, sites=context.sites)
        total = sum((lv["quantity"] for lv in levels), Decimal(0))
        recent = stats.recent_movements(session, m.id, sites=context.sites)
        return {
            "code": m.code,
            "name": m.name_zh,
            "name_en": m.name_en,
            "unit": m.unit,
            "spec": m.spec,
            "spec_en": english_spec(m.spec),
            "description": m.description,
            "synonyms": synonyms_of(session, [m.code]).get(m.code, []),
            "category": m.category.name_zh,
            "supplier": m.supplier.name_zh if m.supplier else None,
            "unit_cost_cny": format(m.unit_cost.quantize(Decimal("0.01")), "f"),
            "reorder_point": fmt_quantity(m.reorder_point),
            "stock": fmt_quantity(total),
            "below_reorder_point": total < m.reorder_point,
            "warehouses": {lv["warehouse"]: fmt_quantity(lv["quantity"]) for lv in levels},
            "recent_movements": [
                {
                    "date": shown.plant_day(mv.created_at).isoformat(),  # the plant's day
                    "type": mv.movement_type,
                    "quantity": fmt_quantity(mv.quantity),
                    "warehouse": mv.warehouse.name_zh,
                }
                for mv in recent
            ],
            "pending_purchase_requests": len(pending_for(session, m.id)),
        }
