"""Bilingual material search: a query looked up in the terms search_index.py keeps.

Names rank first, synonyms next, spec/category/supplier after, descriptions last: a description
is only read when nothing else matches, and then every word need not match ("the spray that stops
trays sticking"): the materials whose texts share the rarest words with the query come first.

A query is split into tokens; CJK runs become their bigrams (or the single character), ASCII
words become prefix ranges. Every token must match (AND). Results are ranked in tiers, each an
index lookup that stops as soon as the page is full: exact code, exact name, name prefix, name
contains, then spec/category/supplier matches. No `LIKE '%q%'` scan anywhere.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import Session

from inventory_ai.models import Material, MaterialSearchTerm, StockLevel
from inventory_ai.services.search_index import (
    COMMON,
    DESCRIPTION,
    DETAIL,
    MAX_TERM,
    NAME,
    NAMED,
    SYNONYM,
    normalise,
    stem,
)
from inventory_ai.services.sites import Sites
from inventory_ai.text import CJK, CJK_RUN

COUNT_CAP = 1000
_HIGH = "\uffff"
_TERMS = MaterialSearchTerm.__table__


@dataclass(frozen=True)
class Token:
    exact: tuple[str, ...] = ()  # every one of these terms must be present
    prefix: str | None = None  # some term must start with this


def parse_query(query: str) -> list[Token]:
    text = normalise(query)
    tokens: list[Token] = []
    for piece in re.split(r"\s+", text):
        for run in re.findall(f"[{CJK}]+|[a-z0-9]+", piece):
            if CJK_RUN.fullmatch(run):
                grams = (run,) if len(run) == 1 else tuple(run[i : i + 2] for i in range(len(run) - 1))
                tokens.append(Token(exact=grams))
            else:
                tokens.append(Token(prefix=stem(run)[:MAX_TERM]))
    return tokens


@dataclass
class SearchFilters:
    category_id: int | None = None
    warehouse_id: int | None = None
    in_stock: bool = False
    # The searcher's warehouses (services/sites.py): the catalogue is everyone's, but a stock
    # filter (warehouse_id, in_stock) looks only at stock held there, and needs them said.
    sites: Sites | None = None


@dataclass
class SearchPage:
    materials: list[Material]
    total: int
    total_capped: bool
    offset: int
    limit: int

    @property
    def more_available(self) -> bool:
        return self.offset + len(self.materials) < self.total or self.total_capped


def _condition(terms, token: Token, exact_term: str | None = None):
    if exact_term is not None:
        return terms.term == exact_term
    return and_(terms.term >= token.prefix, terms.term < token.prefix + _HIGH)


def _postings(tokens: list[Token], fields: tuple[int, ...]):
    """Material ids having every token, driven from the term index in its own order.

    The first exact term (else the first prefix) drives an index scan on (term, field, material_id);
    every other term is an EXISTS probe. With one field and an exact driver the rows come out in
    material_id order without a sort, so a page stops early instead of reading the whole posting list.
    """
    parts = [(t, term) for t in tokens for term in t.exact] + [(t, None) for t in tokens if t.prefix]
    parts.sort(key=lambda part: part[1] is None)  # exact terms drive; prefixes probe
    (driver_token, driver_term), *others = parts
    # Plain table aliases, not ORM ones: adapting an ORM alias's columns costs more than the
    # lookup itself on a small catalogue, and the offline assistant makes dozens a message.
    driver = _TERMS.alias().c

    def in_fields(terms):  # `field = x`, not `IN (x)`: only an equality lets the index be read in order
        return terms.field == fields[0] if len(fields) == 1 else terms.field.in_(fields)

    stmt = select(driver.material_id).where(_condition(driver, driver_token, driver_term), in_fields(driver))
    for token, term in others:
        probe = _TERMS.alias().c
        stmt = stmt.where(
            exists().where(
                probe.material_id == driver.material_id,
                in_fields(probe),
                _condition(probe, token, term),
            )
        )
    # Read the index in its own order and stop after a page. For a prefix, order by `term` only:
    # after a range on `term` the planner treats `field` as a filter, and asking for
    # (term, material_id) makes it sort every row of the range. Within one term the scan follows
    # the index, (field, material_id), on SQLite and PostgreSQL alike.
    order = (driver.material_id,) if driver_term is not None else (driver.term,)
    return stmt, driver, order


def _filter_conditions(filters: SearchFilters) -> list:
    conditions = [Material.active.is_(True)]
    if filters.category_id is not None:
        conditions.append(Material.category_id == filters.category_id)
    if filters.warehouse_id is not None or filters.in_stock:
        if filters.sites is None:
            raise ValueError("a stock filter needs the searcher's sites (SearchFilters.sites)")
        level = [StockLevel.material_id == Material.id, filters.sites.where(StockLevel.warehouse_id)]
        if filters.warehouse_id is not None:
            level.append(StockLevel.warehouse_id == filters.warehouse_id)
        if filters.in_stock:
            level.append(StockLevel.quantity > 0)
        conditions.append(exists().where(and_(*level)))
    return conditions


def search_materials(
    session: Session,
    query: str,
    filters: SearchFilters | None = None,
    limit: int = 10,
    offset: int = 0,
    described: bool = True,
    count_cap: int = COUNT_CAP,
) -> SearchPage:
    """Materials matching every word of the query by name, synonym, spec, category or supplier;
    when none does (and `described`), by their descriptions, the rarest shared words first. The
    total is counted up to `count_cap` (a caller that needs "one or several" asks for less)."""
    filters = filters or SearchFilters()
    tokens = parse_query(query)
    text = normalise(query)
    conditions = _filter_conditions(filters)
    if not tokens and (filters.category_id is not None or filters.warehouse_id is not None):
        return _listed(session, conditions, limit, offset)  # what a category or warehouse holds
    if not tokens:
        return SearchPage([], 0, False, offset, limit)
    wanted = offset + limit
    ids: list[int] = []
    seen: set[int] = set()

    def take(stmt) -> None:
        need = wanted - len(ids)
        if need <= 0:
            return
        for (mid,) in session.execute(stmt.limit(need + len(seen))):
            if mid not in seen:
                seen.add(mid)
                ids.append(mid)
                if len(ids) >= wanted:
                    return

    base = select(Material.id).where(*conditions)
    # 1. exact code  2. exact name  3. name prefix (index range scans, not LIKE). A query with
    # Chinese in it is no code and begins no English name: those lookups are left out.
    chinese = CJK_RUN.search(text) is not None
    if not chinese:
        take(base.where(Material.code == text.upper()))
    take(base.where((Material.name_zh == text) | (Material.name_en_key == text)).order_by(Material.id))
    # One query per name index: an OR of the two ranges makes the planner walk one index whole.
    for name in (Material.name_zh,) if chinese else (Material.name_zh, Material.name_en_key):
        take(base.where(name > text, name < text + _HIGH).order_by(name))
    # 4. name contains every token  5. spec / category / supplier  6. each token in one or the other
    # (as the total counts them): index-driven, and a step runs only while the page is not full.
    # One term alone is in one field or another: step 6 finds nothing steps 4 and 5 did not.
    one_term = len(tokens) == 1 and len(tokens[0].exact) + bool(tokens[0].prefix) == 1
    for fields in ((NAME,), (SYNONYM,), (DETAIL,)) if one_term else ((NAME,), (SYNONYM,), (DETAIL,), NAMED):
        stmt, driver, order = _postings(tokens, fields)
        take(stmt.join(Material, Material.id == driver.material_id).where(*conditions).order_by(*order))
    if not ids and described:
        ids = _described(session, tokens, conditions)
        total = len(ids)
        page = ids[offset:wanted]
        found = (
            {m.id: m for m in session.scalars(select(Material).where(Material.id.in_(page)))} if page else {}
        )
        return SearchPage([found[i] for i in page if i in found], total, False, offset, limit)

    # The total, capped: read at most 2 x (cap + 1) postings in index order (this stops early on
    # both databases; a DISTINCT ... LIMIT does not on PostgreSQL, which aggregates every match
    # first) and count the distinct materials among them. A material can stand in several postings
    # (a prefix matching two of its terms), so a full read means "at least", never exact.
    stmt, driver, _ = _postings(tokens, NAMED)
    read_cap = 2 * (count_cap + 1)
    postings = (
        stmt.join(Material, Material.id == driver.material_id).where(*conditions).limit(read_cap).subquery()
    )
    read, distinct = session.execute(
        select(func.count(), func.count(func.distinct(postings.c.material_id)))
    ).one()
    total = distinct if read < read_cap else max(distinct, count_cap + 1)
    page_ids = ids[offset:wanted]
    by_id = (
        {m.id: m for m in session.scalars(select(Material).where(Material.id.in_(page_ids)))}
        if page_ids
        else {}
    )
    return SearchPage(
        materials=[by_id[i] for i in page_ids if i in by_id],
        total=min(total, count_cap),
        total_capped=total > count_cap,
        offset=offset,
        limit=limit,
    )


def _listed(session: Session, conditions: list, limit: int, offset: int) -> SearchPage:
    """Every material the filters keep, by code: a page, and how many (capped)."""
    page = session.scalars(
        select(Material).where(*conditions).order_by(Material.code).limit(limit).offset(offset)
    ).all()
    counted = select(Material.id).where(*conditions).limit(COUNT_CAP + 1).subquery()
    total = session.scalar(select(func.count()).select_from(counted)) or 0
    return SearchPage(list(page), min(total, COUNT_CAP), total > COUNT_CAP, offset, limit)


_FIELD_WEIGHT = {NAME: 1.0, SYNONYM: 1.0, DETAIL: 0.5, DESCRIPTION: 0.8}
_DESCRIBED_CAP = 60  # a word more materials than this share says little of which one is meant


def described_clearly(session: Session, query: str) -> str | None:
    """The one material a description points at, when it scores well ahead of the next (half as
    much again): 华夫饼上撒的那种大颗粒的糖 is the pearl sugar."""
    scored = _described(session, parse_query(query), [Material.active.is_(True)], scores=True)
    if not scored or (len(scored) > 1 and scored[0][1] < 1.5 * scored[1][1]):
        return None
    return session.scalar(select(Material.code).where(Material.id == scored[0][0]))


def ranked_by_description(session: Session, query: str, codes: list[str]) -> list[str]:
    """Which of these materials the query's other words describe, best first (one shared word is
    enough): 做提拉米苏那个意大利奶酪 among the cheeses is mascarpone."""
    conditions = [Material.active.is_(True), Material.code.in_(codes)]
    ids = _described(session, parse_query(query), conditions, enough=1)
    by_id = dict(
        session.execute(select(Material.id, Material.code).where(Material.id.in_(ids))).tuples().all()
    )
    return [by_id[i] for i in ids if i in by_id]


def _described(
    session: Session, tokens: list[Token], conditions: list, enough: int | None = None, scores: bool = False
) -> list:
    """Materials by the words of a description, not all of which need match: each word counts by
    how rare it is (a word shared by many materials counts little, by more than _DESCRIBED_CAP
    nothing) and where it is found; the best and those near it, best first."""
    terms = {g for t in tokens for g in t.exact} | {
        t.prefix for t in tokens if t.prefix and len(t.prefix) >= 3
    }
    terms -= COMMON
    scores_: dict[int, float] = {}
    matched: dict[int, int] = {}
    for term in terms:
        cut = re.sub(r"(?<=\w{4})(?:ing|ed)$", "", term)  # "sticking" finds "stick", "coloured" "colour"
        condition = (
            MaterialSearchTerm.term == term
            if not term.isascii()
            else and_(MaterialSearchTerm.term >= cut, MaterialSearchTerm.term < cut + _HIGH)
        )
        rows = session.execute(
            select(MaterialSearchTerm.material_id, MaterialSearchTerm.field)
            .join(Material, Material.id == MaterialSearchTerm.material_id)
            .where(condition, *conditions)
            .limit(4 * _DESCRIBED_CAP)
        ).all()
        best: dict[int, float] = {}
        for mid, fld in rows:
            best[mid] = max(best.get(mid, 0.0), _FIELD_WEIGHT.get(fld, 0.5))
        if not best or len(best) > _DESCRIBED_CAP:
            continue
        rarity = math.log(1 + _DESCRIBED_CAP / len(best))
        for mid, weight in best.items():
            scores_[mid] = scores_.get(mid, 0.0) + rarity * weight
            matched[mid] = matched.get(mid, 0) + 1
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
