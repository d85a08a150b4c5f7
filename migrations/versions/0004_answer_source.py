"""where a question came from: the chat, or an MCP client's tool call

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 16:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(length=16), nullable=False, server_default="chat"))
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.alter_column("source", server_default=None)


def downgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("source")
