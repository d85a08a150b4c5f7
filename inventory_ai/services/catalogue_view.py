"""The catalogue as the offline assistant reads it: a read-only port, the only way it reaches the data.

Two halves, because the catalogue has two sizes:
- the directory: the small tables (warehouses, categories, suppliers, other names, intents), held
  in memory as one snapshot per database and read again when one of them changes (a commit that
  touches them marks `catalogue-changed` in the instance folder, which every worker on this host
  looks at with one stat) or DIRECTORY_SECONDS after it was read (other hosts);
- the materials, never held in memory (a million of them have tens of millions of search terms):
  each question is one or a few lookups in the search index (services/search.py), bounded by what
  it needs to know ("one or several", "does any name have this character").

A CatalogueView is made per message over that request's session (assistant/extension.py).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import time
from dataclasses import dataclass, field

from flask import current_app, has_app_context
from pypinyin import lazy_pinyin
from sqlalchemy import Integer, String, bindparam, event, exists, select, text, union_all
from sqlalchemy.orm import Session

from inventory_ai.change_markers import ChangeMarker
from inventory_ai.models import (
    CatalogAlias,
    Category,
    Intent,
    Material,
    MaterialSearchTerm,
    StockLevel,
    Supplier,
    Warehouse,
)
from inventory_ai.services import search, search_described
from inventory_ai.services.catalogue_words import CatalogueWords, of_aliases
from inventory_ai.services.search_index import (
    DESCRIPTION,
    DETAIL,
    HIGH,
    MAX_TERM,
    NAME,
    SYNONYM,
    normalise,
    stem,
)
from inventory_ai.statements import BuiltOnce

DIRECTORY_SECONDS = 30.0  # another host's change is seen this late at most
MARKER = "catalogue-changed"
_SMALL_TABLES = (Warehouse, Category, Supplier, CatalogAlias, Intent)
_NAMED = (NAME, SYNONYM)  # a material's own names and its other names: what people say
_SEARCHED = (NAME, SYNONYM, DETAIL)  # what a search matches before it reads descriptions


@dataclass(frozen=True)
class Card:
    """One material as the assistant names it."""

    code: str
    name_zh: str
    name_en: str
    unit: str
    spec: str | None
    category: str | None


@dataclass(frozen=True)
class Found:
    """What a search found: the first cards, and how many (at least `total`; `more` when there are
    more than were counted)."""

    cards: list[Card]
    total: int
    more: bool = False


@dataclass(frozen=True)
class Listing:
    """A warehouse, category or supplier."""

    kind: str  # warehouse | category | supplier
    code: str
    name_zh: str
    name_en: str
    location: str | None = None


@dataclass(frozen=True)
class Routine:
    """An intent: phrases that mean "call this tool" (services/intents.py)."""

    name: str
    tool_name: str
    default_arguments: dict
    keywords: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Directory:
    listings: tuple[Listing, ...]
    aliases: dict[str, tuple[tuple[str, str], ...]]  # phrase (lower-case) -> ((kind, code), ...)
    routines: tuple[Routine, ...]
    category_codes: dict[int, str]  # id -> code: a material's category without loading it
    read_at: float = field(default_factory=time.monotonic)
    # What a reader works out of the snapshot once (the offline assistant's names of places).
    derived: dict = field(default_factory=dict, compare=False, hash=False)

    def of(self, kind: str) -> list[Listing]:
        return [entry for entry in self.listings if entry.kind == kind]


def _card(m: Material, categories: dict[int, str]) -> Card:
    return Card(m.code, m.name_zh, m.name_en, m.unit, m.spec, categories.get(m.category_id))


class CatalogueView:
    """The reads the offline assistant makes, over one session."""

    def __init__(self, session: Session):
        self._session = session
        self._directory: Directory | None = None
        self._words: CatalogueWords | None = None
        self._asked: dict[tuple, object] = {}  # this message's answers (the catalogue holds still)
        self._known: dict[tuple[int, ...], dict[str, bool]] = {}
        self._terms: dict[str, bool] = {}

    @property
    def directory(self) -> Directory:
        if self._directory is None:
            self._directory = directory(self._session)
        return self._directory

    @property
    def words(self) -> CatalogueWords:
        """The catalogue's words (catalogue_words.py): typos, homophones, characters of names."""
        if self._words is None:
            known = self.directory.derived
            if "alias_words" not in known:
                known["alias_words"] = of_aliases(self.directory.aliases)
            self._words = CatalogueWords(self, *known["alias_words"])
        return self._words

    # --- materials, through the search index -------------------------------------------------

    def search(self, phrase: str, limit: int = 8, count_up_to: int = 50, described: bool = False) -> Found:
        """The first `limit` materials a search finds, and how many up to `count_up_to` (the
        assistant asks "one or several", never the exact size of a large answer). Asked once per
        message: a message is read several times over (its parts, its follow-ups)."""
        key = ("search", phrase, limit, count_up_to, described)
        if key not in self._asked:
            page = search.search_materials(
                self._session,
                phrase,
                limit=limit,
                described=described,
                count_cap=count_up_to,
                together_first=True,  # the linking tries run after run of words: most find nothing
            )
            self._asked[key] = Found(
                [_card(m, self.directory.category_codes) for m in page.materials],
                page.total,
                page.total_capped,
            )
        return self._asked[key]

    def material(self, code: str) -> Card | None:
        """An active material by its code."""
        if ("material", code) not in self._asked:
            found = self._session.scalar(_MATERIAL, {"code": code})
            self._asked["material", code] = (
                _card(found, self.directory.category_codes) if found is not None else None
            )
        return self._asked["material", code]

    def named(self, names: list[str]) -> list[Card]:
        """Active materials whose Chinese name is one of these."""
        if not names:
            return []
        key = ("named", *sorted(set(names)))
        if key not in self._asked:
            found = self._session.scalars(_NAMED_AS, {"names": list(names)})
            self._asked[key] = [_card(m, self.directory.category_codes) for m in found]
        return self._asked[key]

    def may_find(self, phrase: str) -> bool:
        """Whether a search for this phrase can find anything: every word of it begins some term of
        the index (the search's own rule) other than a description's; one index probe a word."""
        for word in _words(phrase):
            prefix = stem(word)[:MAX_TERM]
            if prefix not in self._terms:
                found = self._session.scalar(_BEGINS_NOT_DESCRIBED, {"lo": prefix, "hi": prefix + HIGH})
                self._terms[prefix] = found is not None
            if not self._terms[prefix]:
                return False
        return True

    def in_names(self, characters: set[str]) -> set[str]:
        """Which of these characters some material's name or other name has: one query for all."""
        return self._having(characters, _NAMED)

    def searchable(self, terms: set[str]) -> set[str]:
        """Which of these terms (characters, pairs of characters) a search can find in a name,
        another name, a spec, a category or a supplier: one query for all."""
        return self._having(terms, _SEARCHED)

    def _having(self, terms: set[str], fields: tuple[int, ...]) -> set[str]:
        known = self._known.setdefault(fields, {})
        asked = sorted(t for t in terms if t not in known)
        for start in range(0, len(asked), 200):  # SQLite's compound-select limit is 500
            chunk = asked[start : start + 200]
            stmt = _STATEMENTS.get(("having", len(chunk), fields), lambda: _having(len(chunk), fields))  # noqa: B023
            have = set(self._session.scalars(stmt, {f"t{i}": t for i, t in enumerate(chunk)}))
            known.update((t, t in have) for t in chunk)
        return {t for t in terms if known.get(t)}

    def is_word(self, word: str) -> bool:
        """Whether a whole word (English, pinyin or code) is a term of some name."""
        return self._session.scalar(_A_NAMES_WORD, {"word": word}) is not None

    def begins_a_word(self, start: str) -> bool:
        """Whether some term of a name begins with these letters."""
        return self._session.scalar(_BEGINS_A_NAMES_WORD, {"lo": start, "hi": start + HIGH}) is not None

    def words_beginning(self, start: str, limit: int = 200) -> list[str]:
        """The distinct terms beginning with these letters, at most `limit`: a skip over the index
        (one probe a term), however many materials each term has."""
        rows = self._session.execute(
            text(
                "WITH RECURSIVE t(term) AS ("
                " SELECT MIN(term) FROM material_search_terms WHERE term >= :lo AND term < :hi"
                " UNION ALL SELECT (SELECT MIN(term) FROM material_search_terms"
                " WHERE term > t.term AND term < :hi) FROM t WHERE t.term IS NOT NULL)"
                " SELECT term FROM t WHERE term IS NOT NULL LIMIT :limit"
            ),
            {"lo": start, "hi": start + HIGH, "limit": limit},
        )
        return [r[0] for r in rows]

    def sounding(self, sounds: list[str]) -> dict[str, str]:
        """pinyin -> the one Chinese name of three characters or more said so (its whole pinyin is a
        term of the index), where no other name sounds the same."""
        if not sounds:
            return {}
        names: dict[str, set[str]] = {}
        for sound, name in self._session.execute(_SOUNDING, {"sounds": sounds, "most": 40 * len(sounds)}):
            if len(name) >= 3 and _could_say(name, sound) and _said_as(name) == sound:
                names.setdefault(sound, set()).add(name)
        return {sound: next(iter(found)) for sound, found in names.items() if len(found) == 1}

    def names_with(self, characters: str, limit: int = 50) -> list[str] | None:
        """The Chinese names that have every one of these characters; None when more than `limit`
        do (too many to say which one is meant)."""
        return search.names_having(self._session, characters, limit)

    def kind_search(self, word: str) -> str:
        """The search for a two-character kind that also finds its names with a character between
        (蛋液 for 全蛋液 and 冷冻蛋液, and 蛋黄液, 蛋白液 too): the two characters apart ("蛋 液")
        when that finds the same materials and only such names besides; else the word."""
        if not re.fullmatch(r"[\u4e00-\u9fff]{2}", word):
            return word
        whole = {c.name_zh for c in self.search(word, limit=50).cards}
        apart = {c.name_zh for c in self.search(f"{word[0]} {word[1]}", limit=50).cards}
        extra = apart - whole
        if len(whole) < 2 or not extra or not whole <= apart:
            return word
        infix = re.compile(f"{word[0]}[\u4e00-\u9fff]{word[1]}")
        return f"{word[0]} {word[1]}" if all(infix.search(name) for name in extra) else word

    def in_a_name(self, phrase: str) -> bool:
        """Whether some material's Chinese name holds this phrase."""
        found = self.search(phrase, limit=20, count_up_to=20).cards
        return any(phrase in c.name_zh for c in found)

    def described_clearly(self, phrase: str, margin: float = 1.5) -> str | None:
        return search_described.described_clearly(self._session, phrase, margin)

    def ranked_by_description(self, phrase: str, codes: list[str], margin: float = 1.0) -> list[str]:
        return search_described.ranked_by_description(self._session, phrase, codes, margin)

    # --- stock ------------------------------------------------------------------------------

    def main_store(self, code: str, within: tuple[str, ...] | None = None) -> str | None:
        """Where a material is booked when a request names no warehouse: of those given (None: any),
        the one holding most of it; else the first of those given, never one outside them."""
        held = (
            select(Warehouse.code)
            .join(StockLevel, StockLevel.warehouse_id == Warehouse.id)
            .join(Material, Material.id == StockLevel.material_id)
            .where(Material.code == code)
        )
        if within is not None:
            held = held.where(Warehouse.code.in_(within))
        found = self._session.scalar(held.order_by(StockLevel.quantity.desc(), Warehouse.code).limit(1))
        return found if found is not None or not within else sorted(within)[0]


def _words(phrase: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", normalise(phrase))


# --- the lookups' statements, built once with bind parameters -------------------------------------
# Building a statement and its cache key cost SQLAlchemy more CPU than SQLite spends running it; a
# statement built once keeps its cache key (statements.BuiltOnce). No data is kept here.

_TERM, _FIELD = MaterialSearchTerm.term, MaterialSearchTerm.field
_LO, _HI, _WORD = (bindparam(name, type_=String) for name in ("lo", "hi", "word"))
_MATERIAL = select(Material).where(Material.code == bindparam("code"), Material.active.is_(True))
_NAMED_AS = select(Material).where(
    Material.active.is_(True), Material.name_zh.in_(bindparam("names", expanding=True))
)
_BEGINS_NOT_DESCRIBED = select(_TERM).where(_TERM >= _LO, _TERM < _HI).where(_FIELD != DESCRIPTION).limit(1)
_A_NAMES_WORD = select(_TERM).where(_TERM == _WORD, _FIELD.in_(_NAMED)).limit(1)
_BEGINS_A_NAMES_WORD = select(_TERM).where(_TERM >= _LO, _TERM < _HI).where(_FIELD.in_(_NAMED)).limit(1)


def _could_say(name: str, sound: str) -> bool:
    """Whether `sound` is long enough to be a name's whole pinyin: one to six letters a Chinese
    character. The index returns every name with a syllable such as "an" or "ge" as a term, and
    most cannot be said in so few letters."""
    characters = len(CJK_CHARACTER.findall(name))
    return characters <= len(sound) <= 6 * characters


@functools.lru_cache(maxsize=65536)
def _said_as(name: str) -> str:
    """A name's whole pinyin (高筋面粉 -> gaojinmianfen), kept: the same sounds bring back the same
    names, and pypinyin takes a fifth of a millisecond a name."""
    return "".join(lazy_pinyin(name, errors="ignore"))


CJK_CHARACTER = re.compile(r"[\u4e00-\u9fff]")
_SOUNDING = (
    select(_TERM, Material.name_zh)
    .join(Material, Material.id == MaterialSearchTerm.material_id)
    .where(_TERM.in_(bindparam("sounds", expanding=True)), _FIELD == NAME, Material.active.is_(True))
    .limit(bindparam("most", type_=Integer))
)
_STATEMENTS = BuiltOnce()  # the probes of several terms at once, by how many and which fields


def _having(count: int, fields: tuple[int, ...]):
    """Which of `count` terms (t0, t1, ...) the index has in these fields: one probe a term."""
    terms = [bindparam(f"t{i}", type_=String) for i in range(count)]
    probes = [select(t).where(exists().where(_TERM == t, _FIELD.in_(fields))) for t in terms]  # noqa: SIM300
    return union_all(*probes) if count > 1 else probes[0]


# --- the directory snapshot -----------------------------------------------------------------------

_LOCK = threading.Lock()
_SNAPSHOTS: dict[str, tuple[object, Directory]] = {}
_GENERATION = [0]  # this process's own changes, seen at once


def _marker() -> ChangeMarker | None:
    return ChangeMarker(current_app.instance_path, MARKER) if has_app_context() else None


def directory(session: Session) -> Directory:
    """The small tables, as last read for this database, read again when they changed."""
    marker = _marker()
    version = (_GENERATION[0], marker.current() if marker else None)
    key = str(session.get_bind().url)
    with _LOCK:
        held = _SNAPSHOTS.get(key)
    if held is not None and held[0] == version and time.monotonic() - held[1].read_at < DIRECTORY_SECONDS:
        return held[1]
    listings: list[Listing] = []
    category_codes: dict[int, str] = {}
    for kind, model in (("warehouse", Warehouse), ("category", Category), ("supplier", Supplier)):
        for item in session.scalars(select(model).order_by(model.id)):
            if kind == "category":
                category_codes[item.id] = item.code
            listings.append(
                Listing(kind, item.code, item.name_zh, item.name_en, getattr(item, "location", None))
            )
    aliases: dict[str, list[tuple[str, str]]] = {}
    rows = session.execute(
        select(CatalogAlias.kind, CatalogAlias.code, CatalogAlias.alias).order_by(CatalogAlias.id)
    )
    for kind, code, alias in rows:
        aliases.setdefault(alias.lower(), []).append((kind, code))
    routines = tuple(
        Routine(i.name, i.tool_name, dict(i.default_arguments or {}), tuple(i.keywords or ()))
        for i in session.scalars(select(Intent).where(Intent.active.is_(True)).order_by(Intent.id))
    )
    made = Directory(tuple(listings), {k: tuple(v) for k, v in aliases.items()}, routines, category_codes)
    with _LOCK:
        if len(_SNAPSHOTS) > 16:  # test runs make many databases: keep the memory bounded
            _SNAPSHOTS.clear()
        _SNAPSHOTS[key] = (version, made)
    return made


@event.listens_for(Session, "after_flush")
def _note_small_table_writes(session: Session, _context) -> None:
    if any(isinstance(o, _SMALL_TABLES) for o in (*session.new, *session.dirty, *session.deleted)):
        session.info["catalogue_changed"] = True


@event.listens_for(Session, "do_orm_execute")
def _note_small_table_statements(state) -> None:
    """An UPDATE or DELETE statement (a material's synonyms are replaced with one) leaves no objects
    in the session's new, dirty or deleted sets: noted here instead."""
    mapper = state.bind_mapper
    if (
        (state.is_update or state.is_delete)
        and mapper is not None
        and issubclass(mapper.class_, _SMALL_TABLES)
    ):
        state.session.info["catalogue_changed"] = True


@event.listens_for(Session, "after_commit")
def _mark_small_table_writes(session: Session) -> None:
    if session.info.pop("catalogue_changed", False):
        _GENERATION[0] += 1
        marker = _marker()
        if marker is not None:
            # a read-only instance folder: other workers see it within DIRECTORY_SECONDS
            with contextlib.suppress(OSError):
                marker.mark()


@event.listens_for(Session, "after_rollback")
def _forget_small_table_writes(session: Session) -> None:
    session.info.pop("catalogue_changed", None)
