"""The warehouse: materials, where they are, how much, and every movement that changed it."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum

from sqlalchemy import (
    CheckConstraint,
    FetchedValue,
    ForeignKey,
    Index,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inventory_ai.extensions import db
from inventory_ai.models.base import Money, Quantity, sortable_text, utcnow


class MovementType(StrEnum):
    INBOUND = "inbound"
    OUTBOUND = "outbound"
    ADJUSTMENT = "adjustment"
    TRANSFER = "transfer"


# The one list of movement types: tool schemas, API schemas and the database CHECK derive from it.
MOVEMENT_TYPES: tuple[str, ...] = tuple(t.value for t in MovementType)


class CatalogAlias(db.Model):
    """Another name people use for a material, category, warehouse or supplier ("high-gluten flour"
    for 高筋面粉 Bread Flour, 奶制品 for 乳制品): read by the offline assistant's linking."""

    __tablename__ = "catalog_aliases"
    __table_args__ = (
        UniqueConstraint("kind", "alias", "code", name="uq_catalog_aliases_kind_alias_code"),
        CheckConstraint("kind IN ('material', 'category', 'warehouse', 'supplier')", name="valid_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    code: Mapped[str] = mapped_column(String(32))
    alias: Mapped[str] = mapped_column(String(100))


class Warehouse(db.Model):
    __tablename__ = "warehouses"

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)
    name_zh: Mapped[str] = mapped_column(String(100), unique=True)
    name_en: Mapped[str] = mapped_column(String(100), unique=True)
    location: Mapped[str | None] = mapped_column(String(200))


class Category(db.Model):
    __tablename__ = "categories"

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)
    name_zh: Mapped[str] = mapped_column(String(100), unique=True)
    name_en: Mapped[str] = mapped_column(String(100), unique=True)


class Supplier(db.Model):
    __tablename__ = "suppliers"

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)
    name_zh: Mapped[str] = mapped_column(String(200))
    name_en: Mapped[str] = mapped_column(String(200))
    contact: Mapped[str | None] = mapped_column(String(200))


class Material(db.Model):
    __tablename__ = "materials"
    __table_args__ = (
        CheckConstraint("reorder_point >= 0", name="reorder_point_non_negative"),
        CheckConstraint("unit_cost >= 0", name="unit_cost_non_negative"),
        # Low stock, most urgent first, without aggregating the levels (services/stats.low_stock).
        Index("ix_materials_low_ratio_code", "low_ratio", "code"),
        Index("ix_materials_category_low_ratio_code", "category_id", "low_ratio", "code"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(32), unique=True)
    name_zh: Mapped[str] = mapped_column(sortable_text(200), index=True)
    name_en: Mapped[str] = mapped_column(String(200))
    # Lower-cased English name, indexed for exact-name and prefix ranking in search.
    name_en_key: Mapped[str] = mapped_column(sortable_text(200), index=True)
    unit: Mapped[str] = mapped_column(String(16))
    spec: Mapped[str | None] = mapped_column(String(200))
    # One line of what it is and what it is used for, as the plant says it (searched last). Its
    # other names (synonyms) are its rows in catalog_aliases.
    description: Mapped[str | None] = mapped_column(String(300))
    category_id: Mapped[int] = mapped_column(ForeignKey("categories.id"), index=True)
    supplier_id: Mapped[int | None] = mapped_column(ForeignKey("suppliers.id"), index=True)
    reorder_point: Mapped[Quantity] = mapped_column(default=Decimal("0"))
    unit_cost: Mapped[Money] = mapped_column(default=Decimal("0"))
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow, index=True)
    # Kept by the database's triggers (migration 0017), never written here: the sum of the material's
    # stock levels, and on hand / reorder point while it is below a reorder point above zero and the
    # material is active (NULL otherwise), so "what is low" is an index range.
    on_hand: Mapped[Quantity] = mapped_column(server_default="0", server_onupdate=FetchedValue())
    low_ratio: Mapped[float | None] = mapped_column(
        server_default=FetchedValue(), server_onupdate=FetchedValue()
    )

    category: Mapped[Category] = relationship()
    supplier: Mapped[Supplier | None] = relationship()
    levels: Mapped[list[StockLevel]] = relationship(back_populates="material")


class MaterialSearchTerm(db.Model):
    """Inverted index for search: terms computed in Python (CJK n-grams, pinyin, words, code).

    One portable B-tree index serves SQLite and PostgreSQL alike: exact terms by equality,
    prefixes by a range scan (see services/search.py and docs/architecture.md). Only active
    materials have terms (migration 0022: a trigger removes an inactive material's), so a search
    counts postings without reading each material's row.
    """

    __tablename__ = "material_search_terms"
    # A search's probe "has this material a term in this field (range)?" is a seek in this index
    # alone (migration 0024); it serves every lookup by material id too.
    __table_args__ = (Index("ix_material_search_terms_material_field_term", "material_id", "field", "term"),)

    term: Mapped[str] = mapped_column(sortable_text(64), primary_key=True)
    # 0 = code or name, 2 = a synonym (catalog_aliases), 1 = spec / category / supplier,
    # 3 = description: ranks name matches first, descriptions last.
    field: Mapped[int] = mapped_column(primary_key=True)
    material_id: Mapped[int] = mapped_column(ForeignKey("materials.id", ondelete="CASCADE"), primary_key=True)


class StockLevel(db.Model):
    __tablename__ = "stock_levels"
    __table_args__ = (
        UniqueConstraint("material_id", "warehouse_id", name="uq_stock_levels_material_warehouse"),
        CheckConstraint("quantity >= 0", name="quantity_non_negative"),
        Index("ix_stock_levels_warehouse_material", "warehouse_id", "material_id"),
        Index("ix_stock_levels_warehouse_low_ratio", "warehouse_id", "low_ratio", "material_id"),
        # Search's in-stock filter from the index alone (services/search.py; migration 0022). The
        # query must say `quantity > 0` with a literal 0 for SQLite to use a partial index.
        Index(
            "ix_stock_levels_in_stock",
            "material_id",
            "warehouse_id",
            postgresql_where=text("quantity > 0"),
            sqlite_where=text("quantity > 0"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    material_id: Mapped[int] = mapped_column(ForeignKey("materials.id"))
    warehouse_id: Mapped[int] = mapped_column(ForeignKey("warehouses.id"))
    quantity: Mapped[Quantity] = mapped_column(default=Decimal("0"))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Kept by the triggers: quantity / the material's reorder point while below it (as Material.low_ratio).
    low_ratio: Mapped[float | None] = mapped_column(
        server_default=FetchedValue(), server_onupdate=FetchedValue()
    )

    material: Mapped[Material] = relationship(back_populates="levels")
    warehouse: Mapped[Warehouse] = relationship()


class StockTotal(db.Model):
    """Per warehouse and category: materials in stock, their value, how many are below the reorder
    point. Kept by the database's triggers in the transaction of every write to a stock level or a
    material (migration 0017); `warehouse_id` 0 is all warehouses, a material counted once by its
    total on hand. Statistics and low stock's total read these few rows instead of every level."""

    __tablename__ = "stock_totals"

    warehouse_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    category_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    materials_in_stock: Mapped[int]
    value: Mapped[Decimal] = mapped_column(Numeric(32, 7))
    below_reorder: Mapped[int]


ALL_WAREHOUSES = 0  # StockTotal.warehouse_id of the all-warehouses rows


class StockMovement(db.Model):
    """The ledger. `quantity` is the signed change to this (material, warehouse) level, so the
    sum of a level's movements equals the level. A transfer writes two rows, out and in."""

    __tablename__ = "stock_movements"
    __table_args__ = (
        CheckConstraint("quantity <> 0", name="quantity_not_zero"),
        CheckConstraint("level_after >= 0", name="level_after_non_negative"),
        # Half a unit of the last (3rd) decimal: exact on PostgreSQL's NUMERIC, and immune to
        # the binary rounding of SQLite, which stores NUMERIC values as REAL.
        CheckConstraint("abs(level_after - level_before - quantity) < 0.0005", name="level_arithmetic"),
        CheckConstraint(
            "movement_type IN (" + ", ".join(f"'{t}'" for t in MOVEMENT_TYPES) + ")", name="valid_type"
        ),
        Index("ix_stock_movements_material_created", "material_id", "created_at"),
        # A warehouse's period totals from the index alone, as the next one does for all (0020).
        Index("ix_stock_movements_warehouse_created_quantity", "warehouse_id", "created_at", "quantity"),
        # A period's totals in and out (services/stats.movements) from the index alone.
        Index("ix_stock_movements_created_quantity", "created_at", "quantity"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    material_id: Mapped[int] = mapped_column(ForeignKey("materials.id"))
    warehouse_id: Mapped[int] = mapped_column(ForeignKey("warehouses.id"))
    counterpart_warehouse_id: Mapped[int | None] = mapped_column(ForeignKey("warehouses.id"))
    movement_type: Mapped[str] = mapped_column(String(16))
    quantity: Mapped[Quantity]
    level_before: Mapped[Quantity]
    level_after: Mapped[Quantity]
    reason: Mapped[str] = mapped_column(String(500))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    idempotency_key: Mapped[str | None] = mapped_column(String(128), unique=True)
    # What was asked under that key (BookingRequest.fingerprint): a reuse asking otherwise is refused.
    request_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    # The trace of the request or decision that booked it (OpenTelemetry, when traces are on).
    trace_id: Mapped[str | None] = mapped_column(String(32), index=True)

    material: Mapped[Material] = relationship()
    warehouse: Mapped[Warehouse] = relationship(foreign_keys=[warehouse_id])
    counterpart_warehouse: Mapped[Warehouse | None] = relationship(foreign_keys=[counterpart_warehouse_id])


class PurchaseRequestStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class PurchaseRequest(db.Model):
    __tablename__ = "purchase_requests"
    __table_args__ = (
        CheckConstraint("quantity > 0", name="quantity_positive"),
        CheckConstraint("status IN ('pending', 'approved', 'rejected')", name="valid_status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    material_id: Mapped[int] = mapped_column(ForeignKey("materials.id"), index=True)
    quantity: Mapped[Quantity]
    needed_by: Mapped[date | None]
    note: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=PurchaseRequestStatus.PENDING.value)
    requested_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    material: Mapped[Material] = relationship()
