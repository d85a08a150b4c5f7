"""API tokens carry scopes: what each may be used for (read, chat, decide, admin)

Tokens issued before this revision get `read chat`, and admins' tokens `read chat admin` too, so
the scripts that hold them keep reading, chatting and (admins) running the admin API. None gets
`decide`: approving a booking was open to every token, an agent's included, and must now be asked
for when a token is issued (docs/api.md, "API token scopes"). MCP refuses `admin` as well as
`decide`, so an admin whose agent used an old token issues the agent a new one.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("scopes", sa.String(length=64), nullable=False, server_default="read chat")
        )
    op.execute(
        "UPDATE api_tokens SET scopes = 'read chat admin' "
        "WHERE user_id IN (SELECT id FROM users WHERE role = 'admin')"
    )
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.alter_column("scopes", server_default=None)


def downgrade():
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_column("scopes")
