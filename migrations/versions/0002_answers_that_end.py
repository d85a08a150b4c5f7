"""answers that end: every tool call its own identity, a heartbeat on running answers

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 15:10:00

A call's `call_id` becomes the product's own id (unique); the id the model gave is kept in
`model_call_id` for the wire. Existing rows keep their id as both; an id the model repeated
is made unique by appending the row id.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model_call_id", sa.String(length=64), nullable=False, server_default=""))
    calls = sa.table("tool_calls", sa.column("id", sa.Integer), sa.column("call_id", sa.String),
                     sa.column("model_call_id", sa.String))
    op.execute(calls.update().values(model_call_id=calls.c.call_id))
    repeated = sa.select(calls.c.call_id).group_by(calls.c.call_id).having(sa.func.count() > 1)
    op.execute(
        calls.update()
        .where(calls.c.call_id.in_(repeated))
        .values(call_id=sa.func.substr(calls.c.call_id, 1, 40) + "_" + sa.cast(calls.c.id, sa.String))
    )
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.alter_column("model_call_id", server_default=None)
        batch_op.create_unique_constraint(batch_op.f("uq_tool_calls_call_id"), ["call_id"])
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
        batch_op.create_index("ix_messages_status_heartbeat", ["status", "heartbeat_at"], unique=False)
    messages = sa.table("messages", sa.column("status", sa.String), sa.column("created_at", sa.DateTime),
                        sa.column("heartbeat_at", sa.DateTime))
    # Answers running when this version is installed last beat when they started.
    op.execute(messages.update().where(messages.c.status == "running").values(heartbeat_at=messages.c.created_at))


def downgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_status_heartbeat")
        batch_op.drop_column("heartbeat_at")
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_tool_calls_call_id"), type_="unique")
        batch_op.drop_column("model_call_id")
