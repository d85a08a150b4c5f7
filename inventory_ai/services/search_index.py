"""The terms search looks materials up by, computed in Python and kept in material_search_terms
(one B-tree on (term, field, material_id)):
  - CJK unigrams and bigrams of the Chinese name        面, 粉, 面粉        -> 1- and 2-character queries
  - pinyin of the name, its bigrams and syllables      gaojinmianfen, mianfen, mian, gjmf, mf
  - lower-cased English words, plurals also singular   bread, flour, egg   -> words and prefixes
  - the code                                           m001                -> codes and prefixes
  - the same for synonyms (the material's catalog_aliases, field=2), for spec, category and supplier
    (field=1), and, without pinyin or common words, for the description (field=3).

`index_material` keeps a material's terms in step with every write; `rebuild_index` makes them all
anew (`flask rebuild-search-index`). Only active materials have terms: a database trigger removes
an inactive material's (migration 0022), `index_material` writes them again when it is switched
back on. Querying them: search.py.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pypinyin import Style, lazy_pinyin
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from inventory_ai.models import CatalogAlias, Category, Material, MaterialSearchTerm, Supplier
from inventory_ai.text import CJK, CJK_RUN

NAME, DETAIL, SYNONYM, DESCRIPTION = 0, 1, 2, 3
NAMED = (NAME, SYNONYM, DETAIL)  # what a query must match in full before descriptions are read
# Words of a description that say nothing of what it describes (never indexed, never counted).
COMMON = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "such",
        "that",
        "the",
        "their",
        "them",
        "then",
        "they",
        "this",
        "to",
        "when",
        "with",
        "do",
        "does",
        "not",
        "no",
        "again",
        "used",
        "use",
        "make",
        "makes",
        "kept",
        "keep",
        "keeps",
        "more",
        "less",
    ]
)
MAX_TERM = 64
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


# Querying the terms (search.py, search_described.py): a query's tokens.
# A search counts (and the description search returns) at most this many materials.
COUNT_CAP = 1000
HIGH = "\uffff"  # above every term: [prefix, prefix + HIGH) is a prefix range


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


def material_terms(
    material: Material,
    category: Category | None,
    supplier: Supplier | None,
    synonyms: list[str] | tuple[str, ...] = (),
) -> set[tuple[str, int]]:
    name_terms = text_terms(material.name_zh, True) | text_terms(material.name_en, False)
    name_terms.add(material.code.lower())
    synonym_terms = set().union(*(text_terms(s, True) for s in synonyms)) - name_terms
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
    detail_terms = text_terms(detail_text, True) - name_terms - synonym_terms
    described = text_terms(getattr(material, "description", None), False) - COMMON
    described -= name_terms | synonym_terms | detail_terms
    return (
        {(t, NAME) for t in name_terms}
        | {(t, SYNONYM) for t in synonym_terms}
        | {(t, DETAIL) for t in detail_terms}
        | {(t, DESCRIPTION) for t in described}
    )


def synonyms_of(session: Session, codes: list[str] | None = None) -> dict[str, list[str]]:
    """Material code -> its other names (catalog_aliases of kind material)."""
    stmt = select(CatalogAlias.code, CatalogAlias.alias).where(CatalogAlias.kind == "material")
    if codes is not None:
        stmt = stmt.where(CatalogAlias.code.in_(codes))
    found: dict[str, list[str]] = {}
    for code, alias in session.execute(stmt.order_by(CatalogAlias.id)):
        found.setdefault(code, []).append(alias)
    return found


def index_material(session: Session, material: Material) -> None:
    """Replace a material's terms; call after every write that changes its text or switches it on.
    An inactive material has none (search reads the postings without its row: migration 0022)."""
    session.execute(delete(MaterialSearchTerm).where(MaterialSearchTerm.material_id == material.id))
    if material.active is False:
        return
    category = material.category or (
        session.get(Category, material.category_id) if material.category_id else None
    )
    supplier = material.supplier or (
        session.get(Supplier, material.supplier_id) if material.supplier_id else None
    )
    synonyms = synonyms_of(session, [material.code]).get(material.code, [])
    rows = [
        {"term": term, "field": fld, "material_id": material.id}
        for term, fld in material_terms(material, category, supplier, synonyms)
    ]
    if rows:
        session.execute(insert(MaterialSearchTerm), rows)


def rebuild_index(session: Session, batch: int = 2000) -> int:
    session.execute(delete(MaterialSearchTerm))
    count = 0
    categories = {c.id: c for c in session.scalars(select(Category))}
    suppliers = {s.id: s for s in session.scalars(select(Supplier))}
    synonyms = synonyms_of(session)
    last_id = 0
    while True:
        materials = session.scalars(
            select(Material)
            .where(Material.id > last_id, Material.active.is_(True))
            .order_by(Material.id)
            .limit(batch)
        ).all()
        if not materials:
            break
        rows = [
            {"term": term, "field": fld, "material_id": m.id}
            for m in materials
            for term, fld in material_terms(
                m, categories.get(m.category_id), suppliers.get(m.supplier_id), synonyms.get(m.code, [])
            )
        ]
        session.execute(insert(MaterialSearchTerm), rows)
        count += len(materials)
        last_id = materials[-1].id
    session.commit()
    return count
