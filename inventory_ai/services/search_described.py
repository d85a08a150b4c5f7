"""Materials found by what their texts say of them, when no name matches every word: "the spray
that stops trays sticking", "华夫饼上撒的那种大颗粒的糖". Not every word need match: each counts by how
rare it is and where it is found (names and synonyms most, descriptions next, spec/category/supplier
least). search.py falls back to it; the offline assistant asks it which material a phrase describes.
"""

from __future__ import annotations

import math
import re

from sqlalchemy import and_, exists, select
from sqlalchemy.orm import Session

from inventory_ai.models import Material, MaterialSearchTerm
from inventory_ai.services.search_index import (
    COMMON,
    COUNT_CAP,
    DESCRIPTION,
    DETAIL,
    HIGH,
    NAME,
    SYNONYM,
    Token,
    parse_query,
)

_FIELD_WEIGHT = {NAME: 1.0, SYNONYM: 1.0, DETAIL: 0.5, DESCRIPTION: 0.8}
_CHARACTER = 0.4  # a character's share of a pair's weight
_DESCRIBED_CAP = 60  # a word more materials than this share says little of which one is meant


def described_clearly(session: Session, query: str, margin: float = 1.5) -> str | None:
    """The one material a description points at, when it scores well ahead of the next (by default
    half as much again): 华夫饼上撒的那种大颗粒的糖 is the pearl sugar."""
    scored = described_materials(session, parse_query(query), [Material.active.is_(True)], scores=True)
    if not scored or (len(scored) > 1 and scored[0][1] < margin * scored[1][1]):
        return None
    return session.scalar(select(Material.code).where(Material.id == scored[0][0]))


def ranked_by_description(session: Session, query: str, codes: list[str], margin: float = 1.0) -> list[str]:
    """Which of these materials the query's other words describe, best first (one shared word is
    enough): 做提拉米苏那个意大利奶酪 among the cheeses is mascarpone. None when the best does not
    score `margin` times the next: a near tie is no choice."""
    conditions = [Material.active.is_(True), Material.code.in_(codes)]
    scored = described_materials(session, parse_query(query), conditions, enough=1, scores=True)
    if len(scored) > 1 and scored[0][1] < margin * scored[1][1]:
        return []
    ids = [i for i, _ in scored]
    by_id = dict(
        session.execute(select(Material.id, Material.code).where(Material.id.in_(ids))).tuples().all()
    )
    return [by_id[i] for i in ids if i in by_id]


def described_materials(
    session: Session, tokens: list[Token], conditions: list, enough: int | None = None, scores: bool = False
) -> list:
    """Materials by the words of a description, not all of which need match: each word counts by
    how rare it is (a word shared by many materials counts little, by more than _DESCRIBED_CAP
    nothing) and where it is found; the best and those near it, best first."""
    terms = {g for t in tokens for g in t.exact} | {
        t.prefix for t in tokens if t.prefix and len(t.prefix) >= 3
    }
    # A Chinese description says its words in other pairs than the request (喷在烤盘 / 喷的东西):
    # each character counts too, at a part of a pair's weight.
    characters = {ch for t in tokens for g in t.exact if len(g) == 2 for ch in g} - terms
    terms -= COMMON
    found: dict[str, dict[int, float]] = {}
    chinese = [t for t in terms | characters if not t.isascii()]
    # Chinese terms and characters in one query (each row says its term); English words by prefix
    queries = [(None, MaterialSearchTerm.term.in_(chinese), len(chinese))] if chinese else []
    for term in (t for t in terms if t.isascii()):
        cut = re.sub(r"(?<=\w{4})(?:ing|ed)$", "", term)  # "sticking" finds "stick", "coloured" "colour"
        queries.append((term, and_(MaterialSearchTerm.term >= cut, MaterialSearchTerm.term < cut + HIGH), 1))
    for said, condition, many in queries:
        # The material's row by a probe for each posting read (until the LIMIT), not a join: for a
        # join SQLite 3.38+ first builds a Bloom filter of every material's row (70-100 ms at
        # 100,000 materials for each word, 2 ms so).
        rows = session.execute(
            select(MaterialSearchTerm.term, MaterialSearchTerm.material_id, MaterialSearchTerm.field)
            .where(condition, exists().where(Material.id == MaterialSearchTerm.material_id, *conditions))
            .limit(4 * _DESCRIBED_CAP * many)
        ).all()
        for term, mid, fld in rows:
            best = found.setdefault(said or term, {})
            best[mid] = max(best.get(mid, 0.0), _FIELD_WEIGHT.get(fld, 0.5))
    scores_: dict[int, float] = {}
    matched: dict[int, float] = {}
    for term, best in found.items():
        if not best or len(best) > _DESCRIBED_CAP:
            continue
        part = _CHARACTER if term in characters else 1.0
        rarity = math.log(1 + _DESCRIBED_CAP / len(best))
        for mid, weight in best.items():
            scores_[mid] = scores_.get(mid, 0.0) + part * rarity * weight
            matched[mid] = matched.get(mid, 0) + part
    if not scores_:
        return []
    top = max(scores_.values())
    if enough is None:
        enough = 2 if len(terms) >= 3 else 1  # several words said: a material must share two of them
    ranked = sorted(
        (mid for mid, v in scores_.items() if v >= 0.5 * top and matched[mid] >= enough),
        key=lambda mid: (-scores_[mid], mid),
    )
    return [(mid, scores_[mid]) for mid in ranked[:COUNT_CAP]] if scores else ranked[:COUNT_CAP]
