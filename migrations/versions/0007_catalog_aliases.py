"""other names people use for materials, categories, warehouses and suppliers

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22 18:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "catalog_aliases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("alias", sa.String(length=100), nullable=False),
        sa.CheckConstraint(
            "kind IN ('material', 'category', 'warehouse', 'supplier')", name=op.f("ck_catalog_aliases_valid_kind")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_aliases")),
        sa.UniqueConstraint("kind", "alias", "code", name="uq_catalog_aliases_kind_alias_code"),
    )


def downgrade():
    op.drop_table("catalog_aliases")
