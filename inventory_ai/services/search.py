"""Bilingual material search over an inverted index of terms computed in Python.

Terms per material (stored in material_search_terms, one B-tree on (term, field, material_id)):
  - CJK unigrams and bigrams of the Chinese name        面, 粉, 面粉        -> 1- and 2-character queries
  - pinyin of the name, its bigrams and syllables      gaojinmianfen, mianfen, mian, gjmf, mf
  - lower-cased English words, plurals also singular   bread, flour, egg   -> words and prefixes
  - the code                                           m001                -> codes and prefixes
  - the same for spec, category and supplier, with field=1 so name matches rank first.

A query is split into tokens; CJK runs become their bigrams (or the single character), ASCII
words become prefix ranges. Every token must match (AND). Results are ranked in tiers, each an
index lookup that stops as soon as the page is full: exact code, exact name, name prefix, name
contains, then spec/category/supplier matches. No `LIKE '%q%'` scan anywhere.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pypinyin import Style, lazy_pinyin
from sqlalchemy import and_, delete, exists, func, insert, select
from sqlalchemy.orm import Session, aliased

from inventory_ai.models import Category, Material, MaterialSearchTerm, StockLevel, Supplier
from inventory_ai.services.sites import Sites
from inventory_ai.text import CJK, CJK_RUN

NAME, DETAIL = 0, 1
MAX_TERM = 64
COUNT_CAP = 1000
_HIGH = "\uffff"
_WORD = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower().strip()


def _cjk_terms(run: str) -> set[str]:
    terms = set(run)
    terms.update(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def _pinyin_terms(run: str) -> set[str]:
    syllables = lazy_pinyin(run, errors="ignore")
    initials = [s[0] for s in lazy_pinyin(run, style=Style.FIRST_LETTER, errors="ignore") if s]
    terms = set(syllables)
    terms.add("".join(syllables)[:MAX_TERM])
    terms.add("".join(initials)[:MAX_TERM])
    for i in range(len(syllables) - 1):
        terms.add(syllables[i] + syllables[i + 1])
        terms.add("".join(initials[i : i + 2]))
    return {t for t in terms if t}


def stem(word: str) -> str:
    """An English plural as its singular, so "eggs" finds "Fresh Eggs" and "Duck Egg" alike and
    "strawberry" finds "Frozen Strawberries": berries -> berry, boxes -> box, sheets -> sheet."""
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def text_terms(text: str | None, with_pinyin: bool) -> set[str]:
    text = normalise(text or "")
    terms: set[str] = set()
    for run in CJK_RUN.findall(text):
        terms |= _cjk_terms(run)
        if with_pinyin:
            terms |= _pinyin_terms(run)
    for word in _WORD.findall(text):
        terms.update((word[:MAX_TERM], stem(word)[:MAX_TERM]))
    return terms


def material_terms(
    material: Material, category: Category | None, supplier: Supplier | None
) -> set[tuple[str, int]]:
    name_terms = text_terms(material.name_zh, True) | text_terms(material.name_en, False)
    name_terms.add(material.code.lower())
    detail_text = " ".join(
        t or ""
        for t in (
            material.spec,
            category.name_zh if category else "",
            category.name_en if category else "",
            supplier.name_zh if supplier else "",
            supplier.name_en if supplier else "",
        )
    )
    detail_terms = text_terms(detail_text, True) - name_terms
    return {(t, NAME) for t in name_terms} | {(t, DETAIL) for t in detail_terms}


def index_material(session: Session, material: Material) -> None:
    """Replace a material's terms; call after every write that changes its text."""
    session.execute(delete(MaterialSearchTerm).where(MaterialSearchTerm.material_id == material.id))
    category = material.category or (
        session.get(Category, material.category_id) if material.category_id else None
    )
    supplier = material.supplier or (
        session.get(Supplier, material.supplier_id) if material.supplier_id else None
    )
    rows = [
        {"term": term, "field": fld, "material_id": material.id}
        for term, fld in material_terms(material, category, supplier)
    ]
    if rows:
        session.execute(insert(MaterialSearchTerm), rows)


def rebuild_index(session: Session, batch: int = 2000) -> int:
    session.execute(delete(MaterialSearchTerm))
    count = 0
    categories = {c.id: c for c in session.scalars(select(Category))}
    suppliers = {s.id: s for s in session.scalars(select(Supplier))}
    last_id = 0
    while True:
        materials = session.scalars(
            select(Material).where(Material.id > last_id).order_by(Material.id).limit(batch)
        ).all()
        if not materials:
            break
        rows = [
            {"term": term, "field": fld, "material_id": m.id}
            for m in materials
            for term, fld in material_terms(m, categories.get(m.category_id), suppliers.get(m.supplier_id))
        ]
        session.execute(insert(MaterialSearchTerm), rows)
        count += len(materials)
        last_id = materials[-1].id
    session.commit()
    return count


# --- querying -------------------------------------------------------------------------------


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
    driver = aliased(MaterialSearchTerm)

    def in_fields(terms):  # `field = x`, not `IN (x)`: only an equality lets the index be read in order
        return terms.field == fields[0] if len(fields) == 1 else terms.field.in_(fields)

    stmt = select(driver.material_id).where(_condition(driver, driver_token, driver_term), in_fields(driver))
    for token, term in others:
        probe = aliased(MaterialSearchTerm)
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
    session: Session, query: str, filters: SearchFilters | None = None, limit: int = 10, offset: int = 0
) -> SearchPage:
    filters = filters or SearchFilters()
    tokens = parse_query(query)
    text = normalise(query)
    if not tokens:
        return SearchPage([], 0, False, offset, limit)
    conditions = _filter_conditions(filters)
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
    # 1. exact code  2. exact name  3. name prefix (index range scans, not LIKE)
    take(base.where(Material.code == text.upper()))
    take(base.where((Material.name_zh == text) | (Material.name_en_key == text)).order_by(Material.id))
    # One query per name index: an OR of the two ranges makes the planner walk one index whole.
    for name in (Material.name_zh, Material.name_en_key):
        take(base.where(name > text, name < text + _HIGH).order_by(name))
    # 4. name contains every token  5. spec / category / supplier  6. each token in one or the other
    # (as the total counts them): index-driven, and a step runs only while the page is not full.
    for fields in ((NAME,), (DETAIL,), (NAME, DETAIL)):
        stmt, driver, order = _postings(tokens, fields)
        take(stmt.join(Material, Material.id == driver.material_id).where(*conditions).order_by(*order))

    # The total, capped: read at most 2 x (cap + 1) postings in index order (this stops early on
    # both databases; a DISTINCT ... LIMIT does not on PostgreSQL, which aggregates every match
    # first) and count the distinct materials among them. A material can stand in several postings
    # (a prefix matching two of its terms), so a full read means "at least", never exact.
    stmt, driver, _ = _postings(tokens, (NAME, DETAIL))
    read_cap = 2 * (COUNT_CAP + 1)
    postings = (
        stmt.join(Material, Material.id == driver.material_id).where(*conditions).limit(read_cap).subquery()
    )
    read, distinct = session.execute(
        select(func.count(), func.count(func.distinct(postings.c.material_id)))
    ).one()
    total = distinct if read < read_cap else max(distinct, COUNT_CAP + 1)
    page_ids = ids[offset:wanted]
    by_id = (
        {m.id: m for m in session.scalars(select(Material).where(Material.id.in_(page_ids)))}
        if page_ids
        else {}
    )
    return SearchPage(
        materials=[by_id[i] for i in page_ids if i in by_id],
        total=min(total, COUNT_CAP),
        total_capped=total > COUNT_CAP,
        offset=offset,
        limit=limit,
    )
