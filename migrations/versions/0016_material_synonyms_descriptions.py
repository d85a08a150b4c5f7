"""a material's one-line description (what it is, what it is used for); its synonyms are the
material rows of catalog_aliases (0007), so search and the assistants read one list of other names

Revision ID: 0016
Revises: 0017
Create Date: 2026-11-27 01:00:00

Descriptions of seeded materials come from seed_data/material_texts.csv (`flask seed` fills in
those still empty); `flask rebuild-search-index` indexes them with the synonyms.
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("materials", sa.Column("description", sa.String(length=300), nullable=True))


def downgrade():
    # A plain ALTER (SQLite 3.35+ and PostgreSQL): a batch copy of materials would trip the
    # foreign keys that point at it.
    op.execute("ALTER TABLE materials DROP COLUMN description")
