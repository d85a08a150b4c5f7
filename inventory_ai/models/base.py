"""Shared column helpers for the typed models."""

from __future__ import annotations

import os
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
    """A random (version 4) UUID's 32 hex digits, as `uuid.uuid4().hex` writes them: 16 random bytes,
    the version and variant bits set as RFC 4122 has them. Without the UUID object, whose checks
    cost more than the randomness (a chat message makes several ids)."""
    made = bytearray(os.urandom(16))
    made[6] = (made[6] & 0x0F) | 0x40  # version 4
    made[8] = (made[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return made.hex()


def new_call_id() -> str:
    """A tool call's identity inside the product, shaped like the ids models give ("call_…")."""
    return "call_" + new_id()[:24]


def sortable_text(length: int) -> String:
    """Text whose prefixes are found by a range scan (term >= 'flo' AND term < 'flo\uffff').

    That needs plain code-point order; SQLite compares binary by default, PostgreSQL needs
    COLLATE "C" whatever the database's locale.
    """
    return String(length).with_variant(String(length, collation="C"), "postgresql")
