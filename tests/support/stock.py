"""What the ledger holds now, as the tests read it back."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel


def level(code: str = "M001") -> Decimal:
    """How much of a material is on hand in every warehouse together, read afresh: the commit ends
    the session's snapshot (other threads and connections may have booked meanwhile)."""
    db.session.commit()
    return db.session.scalar(
        select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == code)
    )
