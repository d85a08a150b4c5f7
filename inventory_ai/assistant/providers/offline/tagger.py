"""The parts of a booking said in the floor's own word order ("冷库入淡奶油十箱", "6 cases cream in to
cold store"), tagged per character by a CRF (python-crfsuite) built by scripts/build_floor_tagger.py
and shipped as seed_data/floor_tagger.crfsuite (docs/providers.md, "The floor tagger").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pycrfsuite

from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.reading import Reading, direction

MODEL = Path(__file__).resolve().parents[4] / "seed_data" / "floor_tagger.crfsuite"
SURE = 0.8  # below this probability of a character that decides it, a booking is still asked about
_DECIDING = {"MAT", "NUM", "IN", "OUT", "MOVE", "TO", "WH"}
_CN_DIGITS = set("零〇一二两三四五六七八九十百千万半")
# What the request's words say before the tagger reads it: (kind, pattern), found anywhere.
_LEXICON = [
    ("UNIT", re.compile(r"(?<![a-z])(?:{})(?![a-z])".format("|".join(words.UNITS.values())), re.I)),
    ("PACK", re.compile(rf"(?<![a-z])(?:{words.PACKS})(?![a-z])", re.I)),
    ("IN", re.compile(words.IN, re.I)),
    ("OUT", re.compile(words.OUT, re.I)),
    ("MOVE", re.compile(words.TRANSFER, re.I)),
    ("LINE", words.PRODUCTION_LINE),
]


def _kind(ch: str) -> str:
    if ch.isdigit() or ch in _CN_DIGITS:
        return "d" if ch.isdigit() else "n"
    if "\u4e00" <= ch <= "\u9fff" or (ch.isascii() and ch.isalpha()):
        return "h" if "\u4e00" <= ch <= "\u9fff" else "a"
    return "s" if ch.isspace() else "p"


def features(text: str, known: list[tuple[int, int, str]]) -> list[list[str]]:
    """Each character's features; `known` are spans (start, end, kind) found before: MAT, WH."""
    lowered, marks = text.lower(), [[] for _ in text]
    spans = list(known) + [(m.start(), m.end(), kind) for kind, p in _LEXICON for m in p.finditer(text)]
    for start, end, kind in spans:
        for i in range(start, end):
            marks[i].append(f"{'B' if i == start else 'I'}{kind}")
    # The whole request's say: which kinds of words it has anywhere (a transfer word makes "to the
    # cold store" a target), how many warehouses; an English character's word and its neighbours.
    whole = [f"has={kind}" for kind in sorted({kind for _s, _e, kind in spans})]
    whole.append(f"places={sum(kind == 'WH' for _s, _e, kind in known)}")
    english = [m.group(0) for m in re.finditer(r"[a-z]+", lowered)]
    word_of: list[list[str]] = [[] for _ in text]
    for n, m in enumerate(re.finditer(r"[a-z]+", lowered)):
        before, after = english[n - 1] if n else "^", english[n + 1] if n + 1 < len(english) else "$"
        for i in range(m.start(), m.end()):
            word_of[i] = [f"w={m.group(0)}{'^' if i == m.start() else ''}", f"w-1={before}", f"w+1={after}"]
    padded = f"##{lowered}##"
    out = []
    for i, ch in enumerate(lowered):
        b2, b1, a1, a2 = padded[i], padded[i + 1], padded[i + 3], padded[i + 4]
        f = ["bias", f"c={ch}", f"k={_kind(ch)}", f"c-1={b1}", f"c+1={a1}", f"c-2={b2}", f"c+2={a2}"]
        f += [f"b-={b1}{ch}", f"b+={ch}{a1}", f"k-1={_kind(b1)}{_kind(ch)}{_kind(a1)}", *whole]
        f += [f"m={m}" for m in marks[i]]
        f += [f"m-1={m}" for m in (marks[i - 1] if i else ["^"])]
        f += [f"m+1={m}" for m in (marks[i + 1] if i + 1 < len(text) else ["$"])]
        out.append(f + word_of[i])
    return out


@dataclass
class Floor:
    """A booking as the tagger reads it: its direction, the spans of its parts, and how sure it is."""

    way: str | None  # inbound, outbound, transfer; None: no word of direction, or both
    parts: list[tuple[str, int, int]]  # (tag, start, end)
    probability: float  # of the least sure character that decides it (a material, a number, a way, a place)

    def spans(self, tag: str) -> list[tuple[int, int]]:
        return [(start, end) for kind, start, end in self.parts if kind == tag]


@cache
def _model(path: Path) -> pycrfsuite.Tagger:
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    return tagger


def tag(text: str, known: list[tuple[int, int, str]], path: Path = MODEL) -> Floor:
    """The tagger's reading of a request, given the spans linking found (`path`: another model)."""
    model = _model(path)
    model.set(features(text, known))
    tags = model.tag()
    parts: list[tuple[str, int, int]] = []
    for i, t in enumerate(tags):
        if t == "O":
            continue
        edge, kind = t.split("-", 1)
        if edge == "I" and parts and parts[-1][0] == kind and parts[-1][2] == i:
            parts[-1] = (kind, parts[-1][1], i + 1)
        else:
            parts.append((kind, i, i + 1))
    deciding = [model.marginal(t, i) for i, t in enumerate(tags) if t[2:] in _DECIDING]
    return Floor(way({kind for kind, _s, _e in parts}), parts, min(deciding, default=0.0))


def way(said: set[str]) -> str | None:
    """The direction of the parts said: a transfer word or target, else in or out (not both)."""
    if said & {"MOVE", "TO"}:
        return "transfer"
    if ("IN" in said) != ("OUT" in said):
        return "inbound" if "IN" in said else "outbound"
    return None


def booking(r: Reading) -> Floor | None:
    """The tagger's reading of a request as a booking where no word the rules know says which way
    (reading.direction), when it is sure of it: a direction, a material and a number. None: the
    rules decide (they read "下个月底前到货" as goods still to come), or a question is asked."""
    if direction(r.text):
        return None
    known = [(*m.span, "MAT") for m in r.links.materials] + [(*p.span, "WH") for p in r.links.of("warehouse")]
    floor = tag(r.text, known)
    sure = floor.way and floor.spans("MAT") and floor.spans("NUM") and floor.probability >= SURE
    return floor if sure else None
