"""a booking remembers what was asked under its idempotency key

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 17:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("stock_movements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_hash", sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table("stock_movements", schema=None) as batch_op:
        batch_op.drop_column("request_hash")
