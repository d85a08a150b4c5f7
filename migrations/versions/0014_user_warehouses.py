"""user warehouses: the warehouse codes a person works in (a JSON list), or NULL for every one

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 13:00:00

Existing users stay NULL: unscoped, as before (docs/permissions.md, "Warehouses").
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("warehouses", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("warehouses")
