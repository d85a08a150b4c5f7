"""messages.flagged: the intake's screening verdict kept on the question itself

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 09:30:00

A question is screened once, at intake (services/screening.py); a run resumed in another request
(after a decision, a sign-off or recovery) reads the verdict from the question's row instead of
screening its text again. Questions flagged before this column existed are found through the audit
event intake wrote for them (`prompt_injection_flagged`, with the question's id).
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("flagged", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(
        "UPDATE messages SET flagged = TRUE WHERE role = 'user' AND id IN "
        "(SELECT message_id FROM audit_events WHERE action = 'prompt_injection_flagged' "
        "AND message_id IS NOT NULL)"
    )


def downgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("flagged")
