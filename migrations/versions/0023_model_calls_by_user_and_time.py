"""model_calls read by (user, time): the daily token budget's sum visits today's rows only

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27 19:00:00

With a daily token budget set (INVENTORY_AI_DAILY_TOKEN_BUDGET), every chat message sums the user's
model calls since the plant's midnight (services/usage.tokens_today). Through the index on user_id
alone, that read every call the user ever made and kept today's: a cost that grew with each day of
history. The index on (user_id, created_at) reads today's rows only, and serves every lookup by
user_id as the old index did, which it replaces.
"""

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_model_calls_user_created", "model_calls", ["user_id", "created_at"])
    op.drop_index("ix_model_calls_user_id", table_name="model_calls")


def downgrade():
    op.create_index("ix_model_calls_user_id", "model_calls", ["user_id"])
    op.drop_index("ix_model_calls_user_created", table_name="model_calls")
