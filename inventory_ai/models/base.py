"""Shared column helpers for the typed models."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated

from sqlalchemy import Numeric, String
from sqlalchemy.orm import mapped_column

# Quantities: 3 decimals (grams of a kilogram, mL of a litre). Money: 4 decimals of unit cost.
QUANTITY = Numeric(18, 3)
MONEY = Numeric(14, 4)

Quantity = Annotated[Decimal, mapped_column(QUANTITY)]
Money = Annotated[Decimal, mapped_column(MONEY)]


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def new_id() -> str:
    return uuid.uuid4().hex


def new_call_id() -> str:
    """A tool call's identity inside the product, shaped like the ids models give ("call_…")."""
    return "call_" + uuid.uuid4().hex[:24]


def sortable_text(length: int) -> String:
    """Text whose prefixes are found by a range scan (term >= 'flo' AND term < 'flo\uffff').

    That needs plain code-point order; SQLite compares binary by default, PostgreSQL needs
    COLLATE "C" whatever the database's locale.
    """
    return String(length).with_variant(String(length, collation="C"), "postgresql")
