"""material search: English plurals indexed as their singular too (strawberry finds Strawberries)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 01:00:00

Only the rows the change adds are written (a singular term for each plural word of an English
name), so the upgrade reads the names once and does not rebuild the whole index. The rule is
written out here as it was on this day (services/search.py `stem` may change later; this
migration must not).
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

NAME = 0
MAX_TERM = 64
BATCH = 2000


def stem(word: str) -> str:
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def upgrade():
    bind = op.get_bind()
    materials = sa.table("materials", sa.column("id", sa.Integer), sa.column("name_en", sa.String))
    terms = sa.table(
        "material_search_terms",
        sa.column("term", sa.String),
        sa.column("field", sa.Integer),
        sa.column("material_id", sa.Integer),
    )
    last_id = 0
    while True:
        rows = bind.execute(
            sa.select(materials.c.id, materials.c.name_en)
            .where(materials.c.id > last_id)
            .order_by(materials.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        last_id = rows[-1].id
        have = {
            (term, material_id)
            for term, material_id in bind.execute(
                sa.select(terms.c.term, terms.c.material_id).where(
                    terms.c.material_id.in_([r.id for r in rows]), terms.c.field == NAME
                )
            )
        }
        new = set()
        for row in rows:
            for word in re.findall(r"[a-z0-9]+", (row.name_en or "").lower()):
                singular = stem(word)[:MAX_TERM]
                if singular != word and (singular, row.id) not in have:
                    new.add((singular, row.id))
        if new:
            bind.execute(
                sa.insert(terms), [{"term": t, "field": NAME, "material_id": m} for t, m in sorted(new)]
            )


def downgrade():
    pass  # the extra terms only widen matches; `flask rebuild-search-index` recomputes them all
