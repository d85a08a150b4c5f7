"""users.warehouses_narrowed_at: when an admin last took a warehouse away from a person

Revision ID: 0018
Revises: 0016
Create Date: 2026-11-27 06:00:00

NULL for everyone: nobody's scope has narrowed yet (docs/permissions.md, "Warehouses").
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("warehouses_narrowed_at", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("warehouses_narrowed_at")
