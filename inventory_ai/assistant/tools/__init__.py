"""Every tool the assistant can be given, in the order the model sees them."""

from inventory_ai.assistant.tools.admin import CreateNewIntent
from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.assistant.tools.materials import GetMaterialDetail, SearchMaterials
from inventory_ai.assistant.tools.purchasing import CreatePurchaseRequest
from inventory_ai.assistant.tools.reports import FormatReport
from inventory_ai.assistant.tools.stock import (
    GetInventoryStats,
    GetStockMovements,
    ListLowStock,
    RecordStockMovement,
)


def builtin_tools() -> list[ToolExecutor]:
    return [
        SearchMaterials(),
        GetMaterialDetail(),
        GetInventoryStats(),
        ListLowStock(),
        GetStockMovements(),
        RecordStockMovement(),
        CreatePurchaseRequest(),
        FormatReport(),
        CreateNewIntent(),
    ]
