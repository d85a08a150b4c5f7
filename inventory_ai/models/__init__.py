"""Typed SQLAlchemy 2 models, one module per aggregate. Import from here."""

from inventory_ai.models.admin import AuditEvent, Intent, ToolSetting
from inventory_ai.models.base import new_id, utcnow
from inventory_ai.models.chat import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ModelCall,
    ToolCallRecord,
    ToolRound,
)
from inventory_ai.models.inventory import (
    Category,
    Material,
    MaterialSearchTerm,
    MovementType,
    PurchaseRequest,
    PurchaseRequestStatus,
    StockLevel,
    StockMovement,
    Supplier,
    Warehouse,
)
from inventory_ai.models.users import ROLES, ApiToken, Role, User, hash_token

__all__ = [
    "ROLES",
    "ApiToken",
    "AuditEvent",
    "CallStatus",
    "Category",
    "ChatMessage",
    "Conversation",
    "Intent",
    "Material",
    "MaterialSearchTerm",
    "MessageStatus",
    "ModelCall",
    "MovementType",
    "PurchaseRequest",
    "PurchaseRequestStatus",
    "Role",
    "StockLevel",
    "StockMovement",
    "Supplier",
    "ToolCallRecord",
    "ToolRound",
    "ToolSetting",
    "User",
    "Warehouse",
    "hash_token",
    "new_id",
    "utcnow",
]
