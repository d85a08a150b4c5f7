"""stock totals kept by the database: each material's stock on hand, how far below its reorder point
a material (and each of its levels) is, and per warehouse and category the materials in stock, their
value and how many are below the reorder point

Revision ID: 0017
Revises: 0013
Create Date: 2026-11-27 01:00:00

Statistics and low stock read these instead of aggregating every stock level (22 s at a million
materials on PostgreSQL). Triggers keep them in the same transaction as every write to a stock level
or a material, whoever writes it (the ledger, seeding, an import, a test's factory), on SQLite and
PostgreSQL alike; docs/data-model.md describes them. `warehouse_id` 0 in stock_totals is "all
warehouses" (a material counted once, by its total on hand).
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0014"
branch_labels = None
depends_on = None

# A level's (or, with m.on_hand, a material's) share of a stock_totals row, from its material m.
IN_STOCK = "CASE WHEN m.active AND {q} > 0 THEN 1 ELSE 0 END"
VALUE = "CASE WHEN m.active AND {q} > 0 THEN {q} * m.unit_cost ELSE 0 END"
BELOW = "CASE WHEN m.active AND m.reorder_point > 0 AND {q} < m.reorder_point THEN 1 ELSE 0 END"
RATIO = "CASE WHEN m.active AND m.reorder_point > 0 AND {q} < m.reorder_point THEN CAST({q} AS {float}) / m.reorder_point END"


def _bump(warehouse: str, q: str, sign: str, material: str, source: str = "") -> str:
    """Add (sign +) or take away (sign -) a level's share from its stock_totals row."""
    parts = ", ".join(f"{sign}({e.format(q=q)})" for e in (IN_STOCK, VALUE, BELOW))
    return (
        "INSERT INTO stock_totals (warehouse_id, category_id, materials_in_stock, value, below_reorder) "
        f"SELECT {warehouse}, m.category_id, {parts} FROM materials m {source} WHERE m.id = {material} "
        "ON CONFLICT (warehouse_id, category_id) DO UPDATE SET "
        "materials_in_stock = stock_totals.materials_in_stock + excluded.materials_in_stock, "
        "value = stock_totals.value + excluded.value, "
        "below_reorder = stock_totals.below_reorder + excluded.below_reorder"
    )


def _material_bump(row: str, sign: str) -> str:
    """A material's share of its all-warehouses row (warehouse 0), from the material row itself."""
    q = f"{row}.on_hand"
    parts = ", ".join(f"{sign}({e.format(q=q).replace('m.', row + '.')})" for e in (IN_STOCK, VALUE, BELOW))
    return (
        "INSERT INTO stock_totals (warehouse_id, category_id, materials_in_stock, value, below_reorder) "
        f"VALUES (0, {row}.category_id, {parts}) "
        "ON CONFLICT (warehouse_id, category_id) DO UPDATE SET "
        "materials_in_stock = stock_totals.materials_in_stock + excluded.materials_in_stock, "
        "value = stock_totals.value + excluded.value, "
        "below_reorder = stock_totals.below_reorder + excluded.below_reorder"
    )


def _levels_of(row: str, sign: str) -> str:
    """Every level of a material, its share as the material row `row` (OLD or NEW) says."""
    parts = ", ".join(
        f"{sign}({e.format(q='l.quantity').replace('m.', row + '.')})" for e in (IN_STOCK, VALUE, BELOW)
    )
    return (
        "INSERT INTO stock_totals (warehouse_id, category_id, materials_in_stock, value, below_reorder) "
        f"SELECT l.warehouse_id, {row}.category_id, {parts} FROM stock_levels l WHERE l.material_id = {row}.id "
        "ON CONFLICT (warehouse_id, category_id) DO UPDATE SET "
        "materials_in_stock = stock_totals.materials_in_stock + excluded.materials_in_stock, "
        "value = stock_totals.value + excluded.value, "
        "below_reorder = stock_totals.below_reorder + excluded.below_reorder"
    )


def statements(float_type: str) -> dict[str, list[str]]:
    """The statements of each trigger, the same SQL on both databases."""

    def ratio(q: str, row: str = "m") -> str:
        return RATIO.format(q=q, float=float_type).replace("m.", row + ".")

    level_ratio = (
        "UPDATE stock_levels SET low_ratio = (SELECT {r} FROM materials m WHERE m.id = NEW.material_id) "
        "WHERE id = NEW.id"
    ).format(r=ratio("NEW.quantity"))
    return {
        "level_insert": [
            _bump("NEW.warehouse_id", "NEW.quantity", "+", "NEW.material_id"),
            "UPDATE materials SET on_hand = on_hand + NEW.quantity WHERE id = NEW.material_id",
            level_ratio,
        ],
        "level_update": [
            _bump("OLD.warehouse_id", "OLD.quantity", "-", "OLD.material_id"),
            _bump("NEW.warehouse_id", "NEW.quantity", "+", "NEW.material_id"),
            # one statement, so the material's own trigger runs once
            "UPDATE materials SET on_hand = on_hand"
            " + CASE WHEN id = NEW.material_id THEN NEW.quantity ELSE 0 END"
            " - CASE WHEN id = OLD.material_id THEN OLD.quantity ELSE 0 END"
            " WHERE id IN (OLD.material_id, NEW.material_id)",
            level_ratio,
        ],
        "level_delete": [
            _bump("OLD.warehouse_id", "OLD.quantity", "-", "OLD.material_id"),
            "UPDATE materials SET on_hand = on_hand - OLD.quantity WHERE id = OLD.material_id",
        ],
        "material_insert": [
            _material_bump("NEW", "+"),
            f"UPDATE materials SET low_ratio = {ratio('NEW.on_hand', 'NEW')} WHERE id = NEW.id",
        ],
        # on hand, reorder point, cost, active or category: the material's all-warehouses share
        "material_update": [
            _material_bump("OLD", "-"),
            _material_bump("NEW", "+"),
            f"UPDATE materials SET low_ratio = {ratio('NEW.on_hand', 'NEW')} WHERE id = NEW.id",
        ],
        # reorder point, cost, active or category: its levels' shares too
        "material_terms": [
            _levels_of("OLD", "-"),
            _levels_of("NEW", "+"),
            f"UPDATE stock_levels SET low_ratio = {ratio('quantity', 'NEW')} WHERE material_id = NEW.id",
        ],
        "material_delete": [_material_bump("OLD", "-")],
    }


TRIGGERS = {
    # name: (table, event)
    "level_insert": ("stock_levels", "INSERT"),
    "level_update": ("stock_levels", "UPDATE OF quantity, material_id, warehouse_id"),
    "level_delete": ("stock_levels", "DELETE"),
    "material_insert": ("materials", "INSERT"),
    "material_update": ("materials", "UPDATE OF on_hand, reorder_point, unit_cost, active, category_id"),
    "material_terms": ("materials", "UPDATE OF reorder_point, unit_cost, active, category_id"),
    "material_delete": ("materials", "DELETE"),
}


def create_triggers() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for name, body in statements("double precision").items():
            table, event = TRIGGERS[name]
            op.execute(
                f"CREATE FUNCTION stock_totals_{name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "; ".join(body)
                + "; RETURN NULL; END $$"
            )
            op.execute(
                f"CREATE TRIGGER stock_totals_{name} AFTER {event} ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION stock_totals_{name}()"
            )
    else:
        for name, body in statements("REAL").items():
            table, event = TRIGGERS[name]
            # INSERT ... SELECT ... ON CONFLICT needs a WHERE before ON CONFLICT in SQLite (it has one).
            op.execute(
                f"CREATE TRIGGER stock_totals_{name} AFTER {event} ON {table} FOR EACH ROW BEGIN "
                + "; ".join(body)
                + "; END"
            )


def drop_triggers() -> None:
    bind = op.get_bind()
    for name, (table, _event) in TRIGGERS.items():
        if bind.dialect.name == "postgresql":
            op.execute(f"DROP TRIGGER IF EXISTS stock_totals_{name} ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS stock_totals_{name}()")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS stock_totals_{name}")


def backfill() -> None:
    float_type = "double precision" if op.get_bind().dialect.name == "postgresql" else "REAL"
    op.execute(
        "UPDATE materials SET on_hand = COALESCE("
        "(SELECT SUM(l.quantity) FROM stock_levels l WHERE l.material_id = materials.id), 0)"
    )
    op.execute(
        f"UPDATE materials SET low_ratio = {RATIO.format(q='on_hand', float=float_type).replace('m.', '')}"
    )
    op.execute(
        "UPDATE stock_levels SET low_ratio = (SELECT "
        + RATIO.format(q="stock_levels.quantity", float=float_type)
        + " FROM materials m WHERE m.id = stock_levels.material_id)"
    )
    shares = ", ".join(f"SUM({e.format(q='{q}')})" for e in (IN_STOCK, VALUE, BELOW))
    op.execute(
        "INSERT INTO stock_totals (warehouse_id, category_id, materials_in_stock, value, below_reorder) "
        f"SELECT l.warehouse_id, m.category_id, {shares.format(q='l.quantity')} "
        "FROM stock_levels l JOIN materials m ON m.id = l.material_id GROUP BY l.warehouse_id, m.category_id"
    )
    op.execute(
        "INSERT INTO stock_totals (warehouse_id, category_id, materials_in_stock, value, below_reorder) "
        f"SELECT 0, m.category_id, {shares.format(q='m.on_hand')} FROM materials m GROUP BY m.category_id"
    )


def upgrade():
    op.create_table(
        "stock_totals",
        sa.Column("warehouse_id", sa.Integer(), nullable=False),
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("materials_in_stock", sa.Integer(), nullable=False),
        sa.Column("value", sa.Numeric(precision=32, scale=7), nullable=False),
        sa.Column("below_reorder", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("warehouse_id", "category_id", name=op.f("pk_stock_totals")),
    )
    with op.batch_alter_table("materials", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("on_hand", sa.Numeric(precision=18, scale=3), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("low_ratio", sa.Float(), nullable=True))
        batch_op.create_index("ix_materials_low_ratio_code", ["low_ratio", "code"], unique=False)
        batch_op.create_index(
            "ix_materials_category_low_ratio_code", ["category_id", "low_ratio", "code"], unique=False
        )
        # the offline assistant's "has the catalogue changed?" (max(updated_at)) without a scan
        batch_op.create_index("ix_materials_updated_at", ["updated_at"], unique=False)
    with op.batch_alter_table("stock_levels", schema=None) as batch_op:
        batch_op.add_column(sa.Column("low_ratio", sa.Float(), nullable=True))
        batch_op.create_index(
            "ix_stock_levels_warehouse_low_ratio", ["warehouse_id", "low_ratio", "material_id"], unique=False
        )
    op.create_index("ix_stock_movements_created_quantity", "stock_movements", ["created_at", "quantity"])
    backfill()
    create_triggers()


def downgrade():
    drop_triggers()
    op.drop_index("ix_stock_movements_created_quantity", table_name="stock_movements")
    op.drop_index("ix_stock_levels_warehouse_low_ratio", table_name="stock_levels")
    op.drop_index("ix_materials_category_low_ratio_code", table_name="materials")
    op.drop_index("ix_materials_low_ratio_code", table_name="materials")
    op.drop_index("ix_materials_updated_at", table_name="materials")
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+): a batch copy of materials would trip the
    # foreign keys that point at it.
    for table, column in (
        ("stock_levels", "low_ratio"),
        ("materials", "low_ratio"),
        ("materials", "on_hand"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    op.drop_table("stock_totals")
