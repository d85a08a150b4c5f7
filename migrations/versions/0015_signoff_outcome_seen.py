"""a sign-off's outcome marks its conversation until the requester has opened it

Revision ID: 0015
Revises: 0008
Create Date: 2026-11-27 09:00:00

Sign-offs decided before this revision count as seen (their requesters were told on their pages):
only outcomes from now on mark a conversation in the sidebar.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("signoffs") as batch:
        batch.add_column(sa.Column("seen_at", sa.DateTime(), nullable=True))
    signoffs = sa.table(
        "signoffs",
        sa.column("status", sa.String),
        sa.column("created_at", sa.DateTime),
        sa.column("decided_at", sa.DateTime),
        sa.column("seen_at", sa.DateTime),
    )
    op.get_bind().execute(
        sa.update(signoffs)
        .where(signoffs.c.status != "waiting")
        .values(seen_at=sa.func.coalesce(signoffs.c.decided_at, signoffs.c.created_at))
    )


def downgrade():
    with op.batch_alter_table("signoffs") as batch:
        batch.drop_column("seen_at")
