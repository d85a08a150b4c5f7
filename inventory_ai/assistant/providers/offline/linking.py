"""Catalogue linking: which materials, warehouses, categories and suppliers a request names, through
the product's own search index: codes, exact names and other names, the longest phrase the index
finds something for, English words corrected against the catalogue's (docs/providers.md, "How it
understands"). A mention keeps its best match, its alternatives and whether it named one exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.places import Place, PlaceFinder, _whole_word
from inventory_ai.assistant.providers.offline.slots import PACKS, blank
from inventory_ai.services.catalogue_view import Card, CatalogueView
from inventory_ai.services.search import normalise
from inventory_ai.text import CJK_RUN

EN_WORD = r"[A-Za-z][A-Za-z0-9'&-]*"
# Request words never typed for a name's character (花生又到了 is not 花生油).
_NEVER_FOR_A_NAME = "".join(words.ZH_SINGLE_STOP | words.NEVER_FOR_A_NAME)
# What parts two names said one after the other: two materials, not one described.
_APART = rf"[\d,，、;；。.!?！？/|]|\s\s|{words.AMOUNTS_JOINED}"  # \s\s: an amount blanked


@dataclass
class Mention:
    text: str
    span: tuple[int, int]
    candidates: list[Card]
    exact: bool  # the text points at one material: candidates[0] is it
    total: int = 0  # how many materials the phrase finds
    named: bool = False  # by its full name, an alias or its code (not a part that happens to be unique)
    more: bool = False  # the phrase finds more materials than `total` (counted only so far)

    @property
    def best(self) -> Card:
        return self.candidates[0]


@dataclass
class Links:
    materials: list[Mention] = field(default_factory=list)
    places: list[Place] = field(default_factory=list)

    def of(self, kind: str) -> list[Place]:
        return [p for p in self.places if p.kind == kind]


def _glued(phrase: str, mention: Mention) -> bool:
    """A request word stuck to a name ("黄油有哪些": 黄油有), found only because a name has the same
    characters elsewhere (有盐黄油): not what was named."""
    edges = {phrase[0], phrase[-1]} & words.FUNCTION_CHARS
    return len(phrase) >= 2 and bool(edges) and not any(phrase in c.name_zh for c in mention.candidates)


class Linker(PlaceFinder):
    def __init__(self, catalogue: CatalogueView):
        self.catalogue = catalogue
        # phrase (lower-case) -> [(kind, code)], from seed_data/aliases.csv and admins
        self.aliases = catalogue.directory.aliases
        self.words = catalogue.words  # services/catalogue_words.py

    def find_materials(self, text: str, codes: list[tuple[str, tuple[int, int]]]) -> list[Mention]:
        # What the goods are for (做马卡龙用, "for the cheesecake") is never the material named beside it.
        found = self._materials(aside, codes) if (aside := purpose_aside(text)) != text else []
        return found if any(m.named for m in found) else self._materials(text, codes)

    def _materials(self, text: str, codes: list[tuple[str, tuple[int, int]]]) -> list[Mention]:
        cards = [(code, span, self.catalogue.material(code)) for code, span in codes]
        mentions = [Mention(code, span, [card], True, 1, named=True) for code, span, card in cards if card]
        rest = blank(text, [m.span for m in mentions])
        mentions += self._exact(rest)
        rest = blank(rest, [m.span for m in mentions])
        mentions += self._partial(rest)
        if any(len(m.text) >= 2 for m in mentions):  # a lone character (天 of 这些天) only when nothing else
            mentions = [m for m in mentions if len(m.text) >= 2]
        return self._one_described(text, sorted(mentions, key=lambda m: m.span))

    def _one_described(self, text: str, mentions: list[Mention]) -> list[Mention]:
        """Words of one description that each find a material ("the frozen yellow fruit puree": yellow,
        a colouring): when the words from the first to the last, nothing parting them, describe one
        of those materials clearly, that one is meant, where its own word was said."""
        groups: list[list[Mention]] = []
        for m in mentions:
            if groups and not re.search(_APART, text[groups[-1][-1].span[1] : m.span[0]], re.I):
                groups[-1].append(m)
            else:
                groups.append([m])
        out: list[Mention] = []
        for group in groups:
            start, end = group[0].span[0], group[-1].span[1]
            alone = len(group) < 2 or all(m.named for m in group)  # one word: its own search says
            code = None if alone else self.catalogue.described_clearly(text[start:end])
            held = next(((m, c) for m in group for c in m.candidates if c.code == code), None)
            out += group if held is None else [Mention(held[0].text, held[0].span, [held[1]], True, 1)]
        return out

    def _exact(self, text: str) -> list[Mention]:
        """Full Chinese names and aliases, longest first, one query for all. (English names are found
        by the longest run of words the search index knows: "sea salt" must not stop at "salt".)"""
        options = _options(text)
        if not options:
            return []
        found = self._named_in(text, options)
        mentions: list[Mention] = []
        for phrase, (material, span) in sorted(found.items(), key=lambda f: f[1][1][0] - f[1][1][1]):
            overlaps = any(span[0] < m.span[1] and span[1] > m.span[0] for m in mentions)
            if overlaps or (phrase.isascii() and not _whole_word(text.lower(), span)):
                continue
            longer = self._name_around(text, span) if phrase.isascii() else None  # "eggs" of "quail eggs"
            mentions.append(longer or Mention(phrase, span, [material], True, 1, named=True))
        return mentions

    def _named_in(self, text: str, options: dict[str, tuple[int, int]]) -> dict:
        """phrase -> (material, span) for each phrase that is a name, one typed by its sound or an alias."""
        found: dict[str, tuple[Card, tuple[int, int]]] = {}
        names = [k for k in options if not k.isascii()]
        sounds = self.words.sounds_like(text, _NEVER_FOR_A_NAME)  # 他他粉 -> 塔塔粉
        # "zhong jin mian fen": a name's whole pinyin, spaced or not
        spoken = {
            re.sub(r"[\s'-]", "", p.lower()): p for p in options if p.isascii() and (" " in p or len(p) >= 8)
        }
        for sound, said in self.words.sounds(list(spoken)).items():
            span = options[spoken[sound]]
            sounds.setdefault(said, (text[span[0] : span[1]], span))
        if names or sounds:
            for material in self.catalogue.named(names + list(sounds)):
                if material.name_zh in options:
                    found[material.name_zh] = (material, options[material.name_zh])
                else:
                    typed, span = sounds[material.name_zh]
                    found.setdefault(typed, (material, span))
        lowered = {k.lower(): v for k, v in options.items()}
        for phrase in lowered.keys() & self.aliases.keys():  # a request says a few of ~800 aliases
            codes = {code for kind, code in self.aliases[phrase] if kind == "material"}
            # 芝士 is three cheeses: the search says which
            if len(codes) == 1 and (material := self.catalogue.material(next(iter(codes)))) is not None:
                found.setdefault(phrase, (material, lowered[phrase]))
        return found

    def _name_around(self, text: str, span: tuple[int, int]) -> Mention | None:
        """A material's full English name made of the words just before an alias and the alias."""
        before = list(re.finditer(EN_WORD, text[: span[0]]))
        for first in before[-2:]:
            if span[0] - first.end() > 3 and first is before[-1]:
                return None  # not next to each other
            if first.group(0).lower() in words.EN_STOP:
                continue
            found = self._search(normalise(text[first.start() : span[1]]), (first.start(), span[1]))
            if found is not None and found.named:
                return found
        return None

    def _partial(self, text: str) -> list[Mention]:
        mentions: list[Mention] = []
        text = words.PRODUCTION_LINE.sub(lambda m: " " * len(m.group(0)), text)
        text = words.ZH_STOP_WORDS.sub(lambda m: " " * len(m.group(0)), text)
        content = [ch for ch in "".join(CJK_RUN.findall(text)) if ch not in words.ZH_SINGLE_STOP]
        for run in CJK_RUN.finditer(text):
            for segment, start in _segments(run.group(0), self.words.chars_of(run.group(0))):
                mentions += self._every_name(segment, start + run.start(), alone=len(content) <= 1)
        mentions += self._english(text)
        return mentions

    def _every_name(self, segment: str, offset: int, alone: bool) -> list[Mention]:
        """The names in a segment, longest first, then, when that one is a material of its own, in
        what is left on either side of it: 红豆莲蓉芋泥 is three fillings."""
        found = self._longest(segment, offset, alone)
        glued = segment[0] in words.FUNCTION_CHARS or segment[-1] in words.FUNCTION_CHARS  # 黄油有(哪些)
        if (found is None or len(found.text) < len(segment)) and len(segment) >= 3 and not glued:
            found = self._reordered(segment, offset) or found
        if found is None or not found.exact:
            return [found] if found else []  # 芒果味香精: a loose 味香精, its 芒果 says which kind
        start, end = found.span[0] - offset, found.span[1] - offset
        left, right = segment[:start], segment[end:]
        return [
            *(self._every_name(left, offset, False) if len(left) >= 2 else []),
            found,
            *(self._every_name(right, offset + end, False) if len(right) >= 2 else []),
        ]

    def _reordered(self, segment: str, offset: int) -> Mention | None:
        """The one name a segment shortens or says in another order: 黑巧币 is 黑巧克力币 (its
        characters in order, two left out), 黄油片 is 片状黄油 (in another order, one more). Not 黄油酥
        for 黄油风味起酥油: too much of the name is not said."""
        names = [
            n
            for n in dict.fromkeys(self.catalogue.names_with(segment) or [])
            if set(segment) <= set(n)
            and (len(n) - len(segment) <= 1 or (len(n) - len(segment) <= 2 and _in_order(segment, n)))
        ]
        found = self._search(names[0], (offset, offset + len(segment))) if len(names) == 1 else None
        return Mention(segment, found.span, found.candidates[:1], True, 1) if found and found.named else None

    def _longest(self, segment: str, offset: int, alone: bool) -> Mention | None:
        """The longest substring of a segment the search index finds materials for. A single
        character counts only when it stands alone in the request (查一下糖), never as a leftover."""
        pairs = {segment[i : i + 2] for i in range(len(segment) - 1)}
        known = self.catalogue.searchable(pairs)  # a phrase with a pair no name has finds nothing
        for size in range(min(len(segment), 10), 0, -1):
            for i in range(len(segment) - size + 1):
                phrase = segment[i : i + size]
                if size == 1 and (phrase in words.ZH_SINGLE_STOP or len(segment) > 1 or not alone):
                    continue
                if any(phrase[j : j + 2] not in known for j in range(size - 1)):
                    continue
                mention = self._search(phrase, (offset + i, offset + i + size))
                if mention is not None and not _glued(phrase, mention):
                    return mention
        return None

    def _english(self, text: str) -> list[Mention]:
        # A word the catalogue does not have, read as the one it meant ("choclate", "ryeflour");
        # a pack ("cases") is never a typo of a name ("cashews").
        content = [
            (w if re.fullmatch(PACKS, w) else self.words.meant(w), m.span())
            for m in re.finditer(EN_WORD, text)
            if (w := m.group(0).lower()) not in words.EN_STOP and len(w) > 1
        ]
        mentions: list[Mention] = []
        i = 0
        while i < len(content):
            for size in range(min(4, len(content) - i), 0, -1):
                group = content[i : i + size]
                if any(
                    b[1][0] - a[1][1] > 3 or re.search(r"[,，;；、/|]", text[a[1][1] : b[1][0]])
                    for a, b in zip(group, group[1:], strict=False)
                ):
                    continue  # not next to each other in the text ("strawberry, jam" are two)
                phrase = " ".join(w for w, _ in group)
                span = (group[0][1][0], group[-1][1][1])
                typed = text[span[0] : span[1]]
                if len(phrase) <= 2 and phrase not in self.aliases:
                    continue  # two letters alone ("PR", "ok") begin too many names; in pinyin, a syllable
                if not self.catalogue.may_find(phrase) and not self.catalogue.may_find(typed):
                    continue  # a word no name, spec, supplier or pinyin begins with: no query needed
                # as read, as typed ("quail eggs", not "quail egg"), singular ("butter sheets": Butter Sheet)
                tries = [phrase] + ([normalise(typed), _singular(phrase)] if size > 1 else [])
                found = next((f for t in dict.fromkeys(tries) if (f := self._search(t, span))), None)
                if found is not None:
                    mentions.append(found)
                    i += size
                    break
            else:
                i += 1
        return mentions

    def described(self, text: str, margin: float = 1.5) -> Mention | None:
        """A material described rather than named ("the spray that stops trays sticking"): what the
        catalogue's descriptions and other names share with the words left over; one clear match,
        or the few nearest to ask about."""
        # What it is said to be, without the ask's words (还有多少, how much left) and the particles
        # (的那种): they pair with the words beside them into pairs no description means.
        plain = re.sub(words.DESCRIBES, lambda m: " " * len(m.group(0)), text, flags=re.I)
        for said_apart in (words.ZH_STOP_WORDS, words.PRODUCTION_LINE):  # a line (蛋糕线) is where goods go
            plain = said_apart.sub(lambda m: " " * len(m.group(0)), plain)
        plain = re.sub(rf"[{''.join(words.FUNCTION_CHARS)}]", " ", plain)
        found = re.finditer(rf"{EN_WORD}|[\u4e00-\u9fff]+|\d+%", plain)
        said = [m for m in found if m.group(0).lower() not in words.EN_STOP]
        query = " ".join(m.group(0) for m in said)
        page = self.catalogue.search(query, limit=4, described=True) if said else None
        if page is None or not page.cards:
            return None
        span = (said[0].start(), said[-1].end())
        clear = page.total == 1 or self.catalogue.described_clearly(query, margin) == page.cards[0].code
        cards = page.cards[:1] if clear else page.cards
        return Mention(text[span[0] : span[1]], span, cards, clear, page.total)

    def narrowed(self, mention: Mention, rest: str) -> Mention:
        """A name several materials share, made one by what else the request says of it, read
        against their descriptions and other names (华夫饼上撒的那种大颗粒的糖 is the pearl sugar), clearly."""
        if mention.exact or len(mention.candidates) < 2 or mention.more:
            return mention
        # The shared name's own words cannot tell its materials apart (黄油酥用的黄油: 黄油 again).
        rest = rest.replace(mention.text, " ")
        said = " ".join(m.group(0) for m in re.finditer(rf"{EN_WORD}|[\u4e00-\u9fff]{{2,}}", rest))
        shares = re.findall(r"\d+(?:\.\d+)?%", rest)  # the one whose name or spec says 70%
        every = self.catalogue.search(mention.text, limit=50).cards if said or shares else []
        held = [c.code for c in every if shares and all(s in f"{c.name_en} {c.spec}" for s in shares)]
        if len(held) != 1:  # else the one its use, look or other names describe, not a near tie
            held = self.catalogue.ranked_by_description(said, [c.code for c in every], 1.25) if said else []
        if not held:
            return mention
        return Mention(mention.text, mention.span, [next(c for c in every if c.code == held[0])], True, 1)

    def _search(self, phrase: str, span: tuple[int, int]) -> Mention | None:
        page = self.catalogue.search(phrase)
        if not page.cards:
            return None
        named = normalise(phrase) in (normalise(page.cards[0].name_zh), normalise(page.cards[0].name_en))
        return Mention(phrase, span, page.cards, named or page.total == 1, page.total, named, page.more)


def _options(text: str) -> dict[str, tuple[int, int]]:
    """Every phrase of a request that may be a whole name: each substring of its Chinese runs (up to
    twelve characters) and each run of up to five English words, with where it is."""
    options: dict[str, tuple[int, int]] = {}
    for run in CJK_RUN.finditer(text):
        value = run.group(0)
        for i in range(len(value)):
            for j in range(i + 2, min(len(value), i + 12) + 1):
                options.setdefault(value[i:j], (run.start() + i, run.start() + j))
    english = list(re.finditer(EN_WORD, text))
    for i, first in enumerate(english):
        for last in english[i : i + 5]:
            options.setdefault(normalise(text[first.start() : last.end()]), (first.start(), last.end()))
    return options


def purpose_aside(text: str) -> str:
    """The request without what the goods are for (words.PURPOSE); not a clause before the name, which
    says which it is (做红丝绒的那个可可粉 is the red velvet blend)."""
    return re.sub(rf"(?:{words.PURPOSE})(?!用?的)", lambda m: " " * len(m.group(0)), text, flags=re.I)


def for_a_write(mention: Mention | None, text: str, again: Callable[[str], Mention | None]) -> Mention | None:
    """The material a booking or a purchase is about: what the goods are for never chooses which of a
    loose name it is (黄油做蛋糕用, "cheese for the cheesecake": which one?). A mention not named is
    read `again` without it; that stands when it is loose or another material (none: the purpose is all
    that names the goods)."""
    if mention is None or mention.named or (plain := purpose_aside(text)) == text:
        return mention
    found = again(plain)
    return found if found and (not found.exact or found.best.code != mention.best.code) else mention


def _in_order(short: str, name: str) -> bool:
    rest = iter(name)
    return all(ch in rest for ch in short)


def _singular(phrase: str) -> str:
    return " ".join(re.sub(r"(?<=[^s])s$", "", w) if len(w) > 3 else w for w in phrase.split())


def _segments(run: str, chars: set[str]):
    """Pieces of a Chinese run made only of characters that occur in names; the particle 的 joins."""
    start = None
    for i, ch in enumerate(run + "\0"):
        if ch in chars and ch != "的":
            if start is None:
                start = i
        elif ch == "的" and start is not None and i + 1 < len(run) and run[i + 1] in chars:
            continue
        elif start is not None:
            yield run[start:i].replace("的", ""), start
            start = None
