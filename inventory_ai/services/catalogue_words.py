"""The catalogue's words, asked of the search index (catalogue_view.py) as a request needs them,
never read whole (a million names have millions of words): which characters of a text occur in
names (is a piece worth a search?), whether an English word is a name's or a typo of one
("choclate"), and which name a Chinese run sounds like (他他粉 is typed for 塔塔粉). Other names
(catalog_aliases, in the directory snapshot) count as names. Read by the offline assistant's
linking (assistant/providers/offline/linking.py)."""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left

from pypinyin import lazy_pinyin

from inventory_ai.services.search_index import stem
from inventory_ai.text import CJK_RUN


def of_aliases(aliases) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    """The characters and English words of the other names, the words also in order (a word's
    beginning is then a range of them); worked out once per directory."""
    words = {w for phrase in aliases for w in re.findall(r"[a-z][a-z0-9]{2,}", phrase)}
    words |= {w[:-3] + "y" for w in words if w.endswith("ies")}  # a typo of "cranberry" is near it
    return frozenset(c for phrase in aliases for c in phrase), frozenset(words), tuple(sorted(words))


class CatalogueWords:
    def __init__(
        self, view, alias_chars: frozenset[str], alias_words: frozenset[str], in_order: tuple[str, ...]
    ):
        self.view = view
        self._alias_chars, self._alias_words, self._in_order = alias_chars, alias_words, in_order
        self._known: dict[str, bool] = {}

    def _alias_words_beginning(self, start: str) -> tuple[str, ...]:
        return self._in_order[
            bisect_left(self._in_order, start) : bisect_left(self._in_order, start + "\uffff")
        ]

    def chars_of(self, text: str) -> set[str]:
        """The characters of a text that some name or alias has."""
        asked = {c for c in text if "\u4e00" <= c <= "\u9fff"}
        return (asked & self._alias_chars) | self.view.in_names(asked - self._alias_chars)

    def is_word(self, word: str) -> bool:
        """A whole word of some name or alias."""
        if word not in self._known:
            self._known[word] = word in self._alias_words or self.view.is_word(word)
        return self._known[word]

    def meant(self, word: str) -> str:
        """A word the catalogue does not have, read as the one it most likely meant: a plural
        ("sheets"), two words run together ("ryeflour"), or a typo ("choclate"). A typo keeps
        its first letter, so an ordinary word ("money") is not read as a name ("honey")."""
        if len(word) < 4:
            return word
        if self.view.begins_a_word(word) or self._alias_words_beginning(word):
            return word
        for singular in (word[:-1], word[:-2]) if word.endswith("s") else ():
            if self.is_word(singular):
                return singular
        for cut in range(3, len(word) - 2):
            if self.is_word(word[:cut]) and self.is_word(word[cut:]):
                return f"{word[:cut]} {word[cut:]}"
        # Words that begin as it does (its first three or two letters, or the first and third for a slip in
        # the second): near in length, and not a word it merely begins with ("bakery" is no typo
        # of "bake" or of the "baker" in "baker's ammonia").
        begun = {
            w for start in {word[:3], word[:2], word[0] + word[2]} for w in self.view.words_beginning(start)
        }
        near = {
            w
            for w in begun.union(self._alias_words_beginning(word[0]))
            if w.startswith(word[0])
            and w.isalpha()
            and len(w) >= 4
            and abs(len(w) - len(word)) <= 2
            and not (word.startswith(w) and word[len(w) :].isalpha())
        }
        # One slip in a short word, two in a longer one: "suger" is sugar, "bored" (two slips from
        # "bread") is bored.
        slips = 1 if len(word) <= 5 else 2
        close = [
            w
            for w in difflib.get_close_matches(word, sorted(near), n=3, cutoff=0.8)
            if _slips(word, w) <= slips and self._english(w)
        ]
        return close[0] if close else word

    def _english(self, term: str) -> bool:
        """A term of the index that is an English word of a name or an alias, not pinyin ("taken"
        is no typo of the "tafen" of 塔塔粉)."""
        if term in self._alias_words:
            return True
        cards = self.view.search(term, limit=5).cards
        return any(
            term in (w, stem(w)) for c in cards for w in re.findall(r"[a-z][a-z0-9]+", c.name_en.lower())
        )

    def sounds(self, said: list[str]) -> dict[str, str]:
        """pinyin -> the one name of three characters or more that sounds so."""
        return self.view.sounding(said)

    def sounds_like(self, text: str, never: str = "") -> dict[str, tuple[str, tuple[int, int]]]:
        """Names typed with a character that sounds the same (他他粉 for 塔塔粉, 马私卡彭 for 马斯卡彭):
        name -> (what was typed, where). Three characters or more, one of them the name's own, the
        sound shared by no other name, and none of the `never` characters typed for one of the
        name's (花生又到了 is not 花生油): one index query for every piece of the text."""
        pieces: list[tuple[str, str, tuple[int, int]]] = []
        for run in CJK_RUN.finditer(text):
            value = run.group(0)
            syllables = lazy_pinyin(value, errors="ignore")
            if len(value) < 3 or len(syllables) != len(value):
                continue
            for size in range(min(len(value), 8), 2, -1):
                for i in range(len(value) - size + 1):
                    span = (run.start() + i, run.start() + i + size)
                    pieces.append(("".join(syllables[i : i + size]), value[i : i + size], span))
        by_sound = self.sounds(list(dict.fromkeys(p[0] for p in pieces)))
        found: dict[str, tuple[str, tuple[int, int]]] = {}
        for sound, typed, span in pieces:
            name = by_sound.get(sound)
            differs = [c for c, n in zip(typed, name or "", strict=False) if c != n]
            if (
                name
                and name != typed
                and set(name) & set(typed)
                and name not in found
                and not any(c in never for c in differs)
            ):
                found[name] = (typed, span)
        return found


def _slips(a: str, b: str) -> int:
    """Typing slips between two words: letters left out, added, changed or swapped (the optimal
    string alignment distance)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            row.append(cost)
        previous2, previous = previous, row
    return previous[-1]
