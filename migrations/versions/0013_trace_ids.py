"""trace ids: a ledger movement and an audit event keep the trace (and the event its span) they
were written in, so a booking is found from its trace and its trace from the booking

Revision ID: 0013
Revises: 0009
Create Date: 2026-11-27 12:00:00

Empty for rows written before, and while traces are off (docs/operations.md, "Traces").
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("stock_movements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trace_id", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_stock_movements_trace_id", ["trace_id"], unique=False)
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trace_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("span_id", sa.String(length=16), nullable=True))
        batch_op.create_index("ix_audit_events_trace_id", ["trace_id"], unique=False)


def downgrade():
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_events_trace_id")
        batch_op.drop_column("span_id")
        batch_op.drop_column("trace_id")
    with op.batch_alter_table("stock_movements", schema=None) as batch_op:
        batch_op.drop_index("ix_stock_movements_trace_id")
        batch_op.drop_column("trace_id")
