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

from dataclasses import dataclass

from sqlalchemy import (
    Integer,
    String,
    and_,
    bindparam,
    case,
    exists,
    func,
    intersect,
    literal_column,
    select,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from inventory_ai.models import Material, MaterialSearchTerm
from inventory_ai.services.search_described import described_materials
from inventory_ai.services.search_filters import SearchFilters, filter_conditions, narrowed
from inventory_ai.services.search_index import (
    COUNT_CAP,
    DESCRIPTION,
    DETAIL,
    HIGH,
    NAME,
    NAMED,
    SYNONYM,
    Token,
    normalise,
    parse_query,
)
from inventory_ai.statements import BuiltOnce
from inventory_ai.text import CJK_RUN


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


def _condition(terms, token: Token, exact_term=None):
    if exact_term is not None:
        return terms.term == exact_term
    high = getattr(token, "prefix_high", None)
    return and_(terms.term >= token.prefix, terms.term < (high if high is not None else token.prefix + HIGH))


@dataclass(frozen=True)
class _BoundToken:
    """A token whose terms are bind parameters: one built statement serves every query of its shape."""

    exact: tuple = ()
    prefix: object = None
    prefix_high: object = None


def _bound(tokens: list[Token], params: dict) -> list[_BoundToken]:
    bound = []
    for i, token in enumerate(tokens):
        exact = []
        for j, term in enumerate(token.exact):
            params[f"e{i}_{j}"] = term
            exact.append(bindparam(f"e{i}_{j}", type_=String))
        if token.prefix:
            params[f"p{i}"], params[f"h{i}"] = token.prefix, token.prefix + HIGH
            bound.append(
                _BoundToken(tuple(exact), bindparam(f"p{i}", type_=String), bindparam(f"h{i}", type_=String))
            )
        else:
            bound.append(_BoundToken(tuple(exact)))
    return bound


def _in_fields(terms, fields: tuple[int, ...]):
    """`field = x` for one field: only an equality lets the index be read in (material_id) order.
    Every field but descriptions (NAMED) is the range `field < DESCRIPTION`: a range on the
    index's second column keeps its order on both databases, where `IN (...)` on PostgreSQL
    does not (it then reads a bitmap of every posting of the term before a LIMIT can stop it)."""
    if len(fields) == 1:
        return terms.field == fields[0]
    if set(fields) == set(NAMED) and max(NAMED) < DESCRIPTION:
        return terms.field < DESCRIPTION
    return terms.field.in_(fields)


def _postings(tokens: list[Token], fields: tuple[int, ...]):
    """Material ids having every token, driven from the term index in its own order.

    The first exact term (else the first prefix) drives an index scan on (term, field, material_id);
    every other term is an EXISTS probe. With one field and an exact driver the rows come out in
    material_id order without a sort, so a page stops early instead of reading the whole posting list.
    """
    parts = [(t, term) for t in tokens for term in t.exact] + [
        (t, None) for t in tokens if t.prefix is not None
    ]
    parts.sort(key=lambda part: part[1] is None)  # exact terms drive; prefixes probe
    (driver_token, driver_term), *others = parts
    driver = aliased(MaterialSearchTerm)
    # A prefix reads a range of terms in (term, field, material_id) order. SQLite keeps that order
    # for a range on `field`, but after `field = x` it sorts every posting of each term (54 ms for
    # the name postings of "flour" at 1,000,000 materials, 0.01 ms as a range): one field is
    # asked of a prefix as BETWEEN x AND x. An exact term keeps the equality (its material_id order).
    in_fields = (
        driver.field.between(fields[0], fields[0])
        if driver_term is None and len(fields) == 1
        else _in_fields(driver, fields)
    )
    stmt = select(driver.material_id).where(_condition(driver, driver_token, driver_term), in_fields)
    for token, term in others:
        probe = aliased(MaterialSearchTerm)
        # A probe names its fields one by one: with `field IN (...)` an exact term's probe is an
        # index seek on (term, field, material_id) per field, where the range `field < DESCRIPTION`
        # stops the seek at `field` and reads every posting of the term for each driver row (明 by
        # 天 at 100,000 materials: 10,000 × 5,500 rows, seconds). The same fields either way.
        probe_fields = probe.field == fields[0] if len(fields) == 1 else probe.field.in_(fields)
        stmt = stmt.where(
            exists().where(
                probe.material_id == driver.material_id,
                probe_fields,
                _condition(probe, token, term),
            )
        )
    # Read the index in its own order and stop after a page. For a prefix, order by the index's
    # whole key (term, field, material_id): after a range on `term` the planner treats `field` as
    # a filter, and asking for (term, material_id) makes it sort every row of the range, while
    # `term` alone left the order within a term to the plan (on PostgreSQL a page of 4 and a page
    # of 10 could then pick different materials of one term).
    order = (
        (driver.material_id,) if driver_term is not None else (driver.term, driver.field, driver.material_id)
    )
    return stmt, driver, order, driver_term is not None


def names_having(session: Session, characters: str, limit: int) -> list[str] | None:
    """The active materials' Chinese names that have every one of these characters; None when
    more than `limit` do."""
    tokens = [Token(exact=(c,)) for c in dict.fromkeys(characters)]
    stmt, _driver, order, _exact = _postings(tokens, (NAME,))
    ids = stmt.order_by(*order).limit(limit + 1).subquery()
    found = list(
        session.scalars(
            select(Material.name_zh).where(Material.id.in_(select(ids.c.material_id)), Material.active)
        )
    )
    return None if len(found) > limit else found


def _tier(number: int, stmt, key_text=None, key_int=None, material_id=Material.id, *, limit: int):
    """One ranking tier as rows (tier, key_text, key_int, material id), at most `limit` of them:
    the keys repeat the tier's own ORDER BY, so the rows of every tier can come back in one
    statement and be put in rank order afterwards (a UNION ALL promises no order of its own)."""
    ranked = stmt.with_only_columns(
        literal_column(str(number)).label("tier"),
        (key_text if key_text is not None else literal_column("''")).label("key_text"),
        (key_int if key_int is not None else literal_column("0")).label("key_int"),
        material_id.label("material_id"),
        maintain_column_froms=True,
    ).limit(limit)
    sub = ranked.subquery()
    return select(sub.c.tier, sub.c.key_text, sub.c.key_int, sub.c.material_id)


def _ranked_ids(session: Session, stmt, params: dict, wanted: int, ids: list[int], seen: set[int]):
    """Run one built statement of tiers and append their new ids in rank order until `wanted`;
    the row of the capped total (tier COUNTED, the one with most postings read), when the
    statement has one, is returned."""
    rows = session.execute(stmt, params).all()
    counted = max((r for r in rows if r[0] == COUNTED), key=lambda r: r[2], default=None)
    for _, _, _, mid in sorted((r for r in rows if r[0] != COUNTED), key=lambda r: (r[0], r[1], r[2], r[3])):
        if len(ids) >= wanted:
            break
        if mid not in seen:
            seen.add(mid)
            ids.append(mid)
    return counted


COUNTED = 99  # the row of _ranked_ids' statement that carries the capped total


def search_materials(
    session: Session,
    query: str,
    filters: SearchFilters | None = None,
    limit: int = 10,
    offset: int = 0,
    described: bool = True,
    count_cap: int = COUNT_CAP,
    together_first: bool = False,
) -> SearchPage:
    """Materials matching every word of the query by name, synonym, spec, category or supplier;
    when none does (and `described`), by their descriptions, the rarest shared words first. The
    total is counted up to `count_cap` (a caller that needs "one or several" asks for less).

    Two statements in the common case: the first tiers of the ranking and the capped total in
    one, the page's materials in the other; the later tiers run only while the page is not full.
    `together_first`: a caller that asks of many runs of words no material has together (the
    offline assistant's linking) has SQLite check that first (`_every`)."""
    filters = filters or SearchFilters()
    tokens = parse_query(query)
    text = normalise(query)
    conditions = filter_conditions(filters)
    if not tokens and (filters.category_id is not None or filters.warehouse_id is not None):
        return _listed(session, conditions, limit, offset)  # what a category or warehouse holds
    if not tokens:
        return SearchPage([], 0, False, offset, limit)
    wanted = offset + limit
    ids: list[int] = []
    seen: set[int] = set()
    read_cap = count_cap + 1 if _exact_driver(tokens) else 2 * (count_cap + 1)
    params = {
        "code": text.upper(),
        "text": text,
        "text_high": text + HIGH,
        "wanted": wanted,
        "count_cap": count_cap,
        "first_read": count_cap + 1,
        "long_read": 2 * (count_cap + 1),
    }
    if filters.category_id is not None:
        params["category_id"] = filters.category_id
    if filters.warehouse_id is not None:
        params["warehouse_id"] = filters.warehouse_id
    bound = _bound(tokens, params)
    shape = (
        tuple((len(t.exact), bool(t.prefix)) for t in tokens),
        filters.category_id is not None,
        filters.warehouse_id is not None,
        filters.in_stock,
        None
        if filters.sites is None
        else (None if filters.sites.ids is None else tuple(sorted(filters.sites.ids))),
        chinese := CJK_RUN.search(text) is not None,
        sqlite := session.get_bind().dialect.name == "sqlite",
    )
    first, later, named, every, names_alone = _BUILT.get(
        shape, lambda: _statements(bound, filters, chinese, sqlite)
    )
    if together_first and every is not None and session.execute(every, params).first() is None:
        # No material has every word in its names, synonyms or details: tiers 5-8 and the total
        # are empty, and only the names' own tiers are asked (a name may begin with a word cut short).
        _ranked_ids(session, names_alone, params, wanted, ids, seen)
        counted = (COUNTED, "", 0, 0)
    else:
        counted = _ranked_ids(session, first, params, wanted, ids, seen)
        # 6. synonyms  7. spec / category / supplier  8. each token in one or the other (as the
        # total counts them): only while the page is not full, and 8 not for one term alone (below).
        if len(ids) < wanted:
            _ranked_ids(session, later, params, wanted, ids, seen)
        if len(ids) < wanted and named is not None:
            _ranked_ids(session, named, params, wanted, ids, seen)
    if not ids and described:
        ids = described_materials(session, tokens, conditions)
        total = len(ids)
        page = ids[offset:wanted]
        found = (
            {m.id: m for m in session.scalars(select(Material).where(Material.id.in_(page)))} if page else {}
        )
        return SearchPage([found[i] for i in page if i in found], total, False, offset, limit)

    _, _, read, distinct = counted
    total = distinct if read < read_cap else max(distinct, count_cap + 1)
    page_ids = ids[offset:wanted]
    by_id = {m.id: m for m in session.scalars(_PAGE, {"ids": page_ids})} if page_ids else {}
    return SearchPage(
        materials=[by_id[i] for i in page_ids if i in by_id],
        total=min(total, count_cap),
        total_capped=total > count_cap,
        offset=offset,
        limit=limit,
    )


_BUILT = BuiltOnce()  # query shape -> its statements
_PAGE = select(Material).where(Material.id.in_(bindparam("ids", expanding=True)))


# A page's size and the total's cap are bind parameters like the terms (a LIMIT is one on both
# databases anyway): one built statement serves every page size and cap.
_WANTED = bindparam("wanted", type_=Integer)
_COUNT_CAP = bindparam("count_cap", type_=Integer)
_FIRST_READ = bindparam("first_read", type_=Integer)  # COUNT_CAP + 1 postings
_LONG_READ = bindparam("long_read", type_=Integer)  # twice that, for a prefix


def _statements(tokens: list, filters: SearchFilters, chinese: bool, sqlite: bool) -> tuple:
    """The ranking's statements for one shape of query: tiers 1-5 with the capped total, 6-7, 8
    (None when it cannot add anything), whether any material has every word (None for one word or
    none as a prefix) and tiers 1-4 alone."""
    wanted = _WANTED
    conditions = filter_conditions(filters, True, sqlite)

    def postings_tier(number: int, fields: tuple[int, ...]):
        stmt, driver, order, exact = _postings(tokens, fields)
        stmt = narrowed(stmt, driver, filters, sqlite).order_by(*order)
        if exact:  # (field, material_id) within one term: the material id orders it
            return _tier(number, stmt, material_id=driver.material_id, limit=wanted)
        return _tier(number, stmt, driver.term, driver.field, driver.material_id, limit=wanted)

    base = select(Material.id).where(*conditions)
    # 1. exact code  2. exact name  3. name prefix (index range scans, not LIKE). A query with
    # Chinese in it is no code and begins no English name: those lookups are left out.
    first = [] if chinese else [_tier(1, base.where(Material.code == bindparam("code")), limit=wanted)]
    first += [
        _tier(
            2,
            base.where(
                (Material.name_zh == bindparam("text")) | (Material.name_en_key == bindparam("text"))
            ).order_by(Material.id),
            limit=wanted,
        ),
    ]
    # One query per name index: an OR of the two ranges makes the planner walk one index whole.
    # Ties of one name by id: the index's own order on SQLite, a cheap incremental sort on PostgreSQL.
    for number, name in (
        ((3, Material.name_zh),) if chinese else ((3, Material.name_zh), (4, Material.name_en_key))
    ):
        ranged = base.where(name > bindparam("text"), name < bindparam("text_high")).order_by(
            name, Material.id
        )
        first.append(_tier(number, ranged, name, limit=wanted))
    names_alone = union_all(*first) if len(first) > 1 else first[0]
    first.append(postings_tier(5, (NAME,)))  # 5. name contains every token
    first = union_all(*first, *_capped_total(tokens, filters, sqlite))
    later = union_all(postings_tier(6, (SYNONYM,)), postings_tier(7, (DETAIL,)))
    # One term alone is in one field or another: tier 8 finds nothing tiers 5-7 did not.
    single_term = len(tokens) == 1 and len(tokens[0].exact) + (tokens[0].prefix is not None) == 1
    every = _every(tokens) if sqlite else None
    return first, later, None if single_term else postings_tier(8, NAMED), every, names_alone


def _every(tokens: list) -> object | None:
    """Whether some material has every word in its names, synonyms or details, as one INTERSECT of
    each word's postings: index-only range reads, their sizes' worth of work. When no material has
    them all, tiers 5-8 and the total each probe every posting of the first word for the others:
    five reads of its postings ("baking paper rolls" at 100,000 materials: 60-100 ms of CPU on
    SQLite, 12 ms so; docs/benchmarks.md). When one has them, the check is the cost alone (a few ms
    for common words), hence only for a caller that expects to find nothing often. PostgreSQL
    joins the probes as sets and finds nothing as fast without it. For several words with one as
    a prefix (an exact word's probe is a direct seek)."""
    parts = [(t, term) for t in tokens for term in t.exact] + [
        (t, None) for t in tokens if t.prefix is not None
    ]
    if len(parts) < 2 or all(term is not None for _, term in parts):
        return None
    terms = MaterialSearchTerm
    arms = [
        select(terms.material_id).where(_condition(terms, token, term), terms.field < DESCRIPTION)
        for token, term in parts
    ]
    return intersect(*arms).limit(1)


def _exact_driver(tokens: list[Token]) -> bool:
    return any(t.exact for t in tokens)


def _capped_total(tokens: list[Token], filters: SearchFilters, sqlite: bool):
    """The total, capped, as a row (COUNTED, '', postings read, distinct materials among them).

    Read the postings in index order and stop: an exact term holds a material once (the index
    keeps each of a material's terms in one field only), so COUNT_CAP + 1 postings tell "more than
    the cap"; a prefix can match several terms of one material, so twice that many are read and
    the distinct materials counted (a full read then means "at least"). Ordering by the index's
    own columns makes both databases scan it and stop at the LIMIT: without it PostgreSQL chose a
    bitmap of every posting of a single character (0.8-1.0 s for 面 at 1,000,000 materials).
    Unfiltered, it reads the term index alone: no material's row (postings are of active ones).

    Rows of tier COUNTED to put in the tiers' UNION ALL (the one with most postings read counts)."""
    stmt, driver, _, exact = _postings(tokens, NAMED)
    ordered = narrowed(stmt, driver, filters, sqlite).order_by(driver.term, driver.field, driver.material_id)
    tier = (literal_column(str(COUNTED)), literal_column("''"))

    def counted(rows):
        return select(*tier, func.count(), func.count(func.distinct(rows.c.material_id)))

    if exact:
        return (counted(ordered.limit(_FIRST_READ).subquery()),)
    # A prefix: when its first COUNT_CAP + 1 postings are as many materials (the usual case: the
    # range's first term alone has them), the total is over the cap whatever twice that many
    # would add, and that longer read is not made: its LIMIT, worked out once before it reads a
    # row, is then 0 (a WHERE on the first read's count did not stop SQLite reading). For an
    # in-stock count that halves the stock probes.
    first = counted(ordered.limit(_FIRST_READ).subquery()).cte("first_postings")
    read, distinct = first.c[2], first.c[3]
    over = select(*tier, read, distinct).where(distinct > _COUNT_CAP)
    needed = case((select(distinct).scalar_subquery() > _COUNT_CAP, 0), else_=_LONG_READ)
    return over, counted(ordered.limit(needed).subquery())


def _listed(session: Session, conditions: list, limit: int, offset: int) -> SearchPage:
    """Every material the filters keep, by code: a page, and how many (capped)."""
    page = session.scalars(
        select(Material).where(*conditions).order_by(Material.code).limit(limit).offset(offset)
    ).all()
    counted = select(Material.id).where(*conditions).limit(COUNT_CAP + 1).subquery()
    total = session.scalar(select(func.count()).select_from(counted)) or 0
    return SearchPage(list(page), min(total, COUNT_CAP), total > COUNT_CAP, offset, limit)
