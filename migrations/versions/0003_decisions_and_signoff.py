"""decisions with edits and reasons, sign-off by a second person, the model that answered

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 16:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MESSAGE_STATUSES = ("running", "awaiting_confirmation", "awaiting_signoff", "completed", "failed", "cancelled")
CALL_STATUSES = ("success", "error", "pending_confirmation", "awaiting_signoff", "declined")
OLD_MESSAGE_STATUSES = ("running", "awaiting_confirmation", "completed", "failed", "cancelled")
OLD_CALL_STATUSES = ("success", "error", "pending_confirmation", "declined")


def _in(values):
    return "status IN (" + ", ".join(f"'{v}'" for v in values) + ")"


def upgrade():
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model", sa.String(length=64), nullable=True))
        batch_op.drop_constraint(batch_op.f("ck_messages_valid_status"), type_="check")
        batch_op.create_check_constraint("valid_status", _in(MESSAGE_STATUSES))
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("approved_arguments", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("decided_by_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("decided_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("decision_reason", sa.String(length=500), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_tool_calls_decided_by_id_users"), "users", ["decided_by_id"], ["id"]
        )
        batch_op.drop_constraint(batch_op.f("ck_tool_calls_valid_status"), type_="check")
        batch_op.create_check_constraint("valid_status", _in(CALL_STATUSES))
    op.create_table(
        "signoffs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(length=32), nullable=False),
        sa.Column("requested_by_id", sa.Integer(), nullable=False),
        sa.Column("value_cny", sa.Numeric(precision=14, scale=4), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("decided_by_id", sa.Integer(), nullable=True),
        sa.Column("decided_at", sa.DateTime(), nullable=True),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.CheckConstraint(
            "status IN ('waiting', 'approved', 'rejected', 'expired', 'withdrawn')",
            name=op.f("ck_signoffs_valid_status"),
        ),
        sa.ForeignKeyConstraint(
            ["call_id"], ["tool_calls.id"], name=op.f("fk_signoffs_call_id_tool_calls"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["decided_by_id"], ["users.id"], name=op.f("fk_signoffs_decided_by_id_users")),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name=op.f("fk_signoffs_message_id_messages"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["requested_by_id"], ["users.id"], name=op.f("fk_signoffs_requested_by_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signoffs")),
        sa.UniqueConstraint("call_id", name=op.f("uq_signoffs_call_id")),
    )
    with op.batch_alter_table("signoffs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_signoffs_message_id"), ["message_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_signoffs_status"), ["status"], unique=False)


def downgrade():
    with op.batch_alter_table("signoffs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signoffs_status"))
        batch_op.drop_index(batch_op.f("ix_signoffs_message_id"))
    op.drop_table("signoffs")
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_tool_calls_valid_status"), type_="check")
        batch_op.create_check_constraint("valid_status", _in(OLD_CALL_STATUSES))
        batch_op.drop_constraint(batch_op.f("fk_tool_calls_decided_by_id_users"), type_="foreignkey")
        batch_op.drop_column("decision_reason")
        batch_op.drop_column("decided_at")
        batch_op.drop_column("decided_by_id")
        batch_op.drop_column("approved_arguments")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_messages_valid_status"), type_="check")
        batch_op.create_check_constraint("valid_status", _in(OLD_MESSAGE_STATUSES))
        batch_op.drop_column("model")
