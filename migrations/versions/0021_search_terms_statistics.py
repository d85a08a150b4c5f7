"""material_search_terms.term: a finer histogram on PostgreSQL

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 10:10:00

A prefix such as "tang" matches 357,000 postings at 1,000,000 materials; with the default
statistics PostgreSQL estimated 3,600 and chose a bitmap of all of them for the search's capped
count (1.7 s) instead of reading the index in order and stopping at the cap (78 ms). A larger
sample of the term column gives it the estimate. SQLite plans without such statistics: nothing
to do there. The next ANALYZE (autovacuum's, or the operator's) takes it up.
"""

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE material_search_terms ALTER COLUMN term SET STATISTICS 1000")


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE material_search_terms ALTER COLUMN term SET STATISTICS -1")
