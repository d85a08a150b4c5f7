"""The catalogue's words, for linking: the characters and English words of material names and
aliases (is a piece of a request worth a search? is an unknown word a typo of a name's?), the
search index's ASCII terms (can a search for this phrase find anything?) and the sound of each
Chinese name (他他粉 is typed for 塔塔粉). Read again when a material is added or changed (one small
query a message tells) and every VOCABULARY_SECONDS (aliases)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from pypinyin import lazy_pinyin
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.assistant.providers.offline.words import ZH_SINGLE_STOP
from inventory_ai.models import Material, MaterialSearchTerm
from inventory_ai.services.search import DESCRIPTION, MAX_TERM, normalise, stem
from inventory_ai.text import CJK_RUN


@dataclass
class Vocabulary:
    chars: set[str]
    words: list[str]  # English words of four letters or more, for typos
    word_set: set[str]  # every English word of three letters or more, for plurals and run-together words
    loaded_at: float
    names_zh: str = ""  # every Chinese name, one after another (is a short name part of one?)
    sounds: dict[str, str] = field(default_factory=dict)  # pinyin -> the one name of 3+ characters it is

    def may_find(self, phrase: str, session: Session) -> bool:
        """Whether a search for this phrase can find anything: every word of it begins some term
        of the index (the search's own rule), one index lookup a word (the index's terms are not
        held in memory: a million materials have millions)."""
        for word in re.findall(r"[a-z0-9]+", normalise(phrase)):
            prefix = stem(word)[:MAX_TERM]
            term = MaterialSearchTerm.term
            # a description's words alone do not make a phrase worth searching (they find too much)
            found = select(term).where(
                term >= prefix, term < prefix + "\uffff", MaterialSearchTerm.field != DESCRIPTION
            )
            if session.scalar(found.limit(1)) is None:
                return False
        return True


_VOCABULARY: dict[str, Vocabulary] = {}
VOCABULARY_SECONDS = 120.0  # the catalogue's words are read again this often (new materials)
# At most this many names are read into memory (their characters, words and sounds, for typos and
# homophones); a larger catalogue is linked through the search index beyond them.
VOCABULARY_NAMES = 20_000


def catalogue_words(session: Session, aliases: dict[str, list[tuple[str, str]]]) -> Vocabulary:
    # Two index lookups (materials are never deleted: a new one raises the id, a change updated_at).
    version = tuple(session.execute(select(func.max(Material.id), func.max(Material.updated_at))).one())
    key = f"{session.get_bind().url}|{version}"
    known = _VOCABULARY.get(key)
    if known is not None and time.monotonic() - known.loaded_at < VOCABULARY_SECONDS:
        return known
    _VOCABULARY.clear()  # one catalogue version at a time
    chars: set[str] = set()
    words: set[str] = set()
    names_zh: list[str] = []
    for name_zh, name_en in session.execute(
        select(Material.name_zh, Material.name_en).where(Material.active.is_(True)).limit(VOCABULARY_NAMES)
    ):
        names_zh.append(name_zh)
        chars |= set(name_zh)
        words |= set(re.findall(r"[a-z][a-z0-9]{2,}", name_en.lower()))
    for phrase in aliases:
        chars |= set(phrase)
        words |= set(re.findall(r"[a-z][a-z0-9]{2,}", phrase))
    words |= {w[:-3] + "y" for w in words if w.endswith("ies")}  # a typo of "cranberry" is near it
    sounds: dict[str, list[str]] = {}
    for name in names_zh:
        if len(name) >= 3:
            sounds.setdefault("".join(lazy_pinyin(name, errors="ignore")), []).append(name)
    known = _VOCABULARY[key] = Vocabulary(
        chars,
        sorted(w for w in words if len(w) >= 4),
        words,
        time.monotonic(),
        "|".join(names_zh),
        {sound: names[0] for sound, names in sounds.items() if len(names) == 1},
    )
    return known


def sounds_like(vocabulary: Vocabulary, text: str) -> dict[str, tuple[str, tuple[int, int]]]:
    """Names typed with a character that sounds the same (他他粉 for 塔塔粉, 马私卡彭 for 马斯卡彭):
    name -> (what was typed, where). Three characters or more, one of them the name's own, and
    the sound shared by no other name."""
    by_sound = vocabulary.sounds
    found: dict[str, tuple[str, tuple[int, int]]] = {}
    for run in CJK_RUN.finditer(text):
        value = run.group(0)
        if len(value) < 3:
            continue
        syllables = lazy_pinyin(value, errors="ignore")
        if len(syllables) != len(value):
            continue
        for size in range(min(len(value), 8), 2, -1):
            for i in range(len(value) - size + 1):
                name = by_sound.get("".join(syllables[i : i + size]))
                typed = value[i : i + size]
                differs = [c for c, n in zip(typed, name or "", strict=False) if c != n]
                if (
                    name
                    and name != typed
                    and set(name) & set(typed)
                    and name not in found
                    and not any(c in ZH_SINGLE_STOP or c in "又也只都就还和或跟" for c in differs)
                ):  # never a request word for a name's character: 花生又到了 is not 花生油
                    found[name] = (typed, (run.start() + i, run.start() + i + size))
    return found
