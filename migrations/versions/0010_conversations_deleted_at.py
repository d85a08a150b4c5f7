"""conversations: deleted_at, so a person can delete a conversation and an admin still reads it

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-26 21:00:00

A deletion is soft: the owner no longer sees the conversation (list, search, page, API), while the
audit trail and the admin conversations API keep it, marked with when it was deleted.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("conversations", sa.Column("deleted_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("deleted_at")
