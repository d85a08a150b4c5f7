"""The words the offline assistant acts on (the verbs of each direction, of a question, a search, a
report, a refusal, teaching; request words that are never part of a name) are data:
seed_data/offline_words.json, each list of alternatives with what it is for, loaded and checked when
this module is imported. INVENTORY_AI_OFFLINE_WORDS may name a JSON file of {"patterns": {NAME: [...]},
"word_sets": {...}, "typos": {...}} added to the shipped lists and checked the same way (a list that
does not exist, or an alternative that is no valid pattern, stops the start with the reason).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[4] / "seed_data" / "offline_words.json"
_REF = re.compile(r"\{(_?[A-Z][A-Z_]*)\}")
# Every list the assistant reads: a data file without one of them is refused at start.
REQUIRED = {
    "patterns": {"IN", "OUT", "LOSS", "QUESTION", "SEARCH", "TRANSFER", "ADJUST", "TEACH", "TAMPER", "DESTROY",
                 "POLITE", "WAREHOUSE_SAID", "QUOTED", "SEARCH_FILLER", "ACTS_IN", "ACTS_OUT", "BUY", "REPORT"},
    "compiled": {"ZH_STOP_WORDS", "PRODUCTION_LINE"},
    "word_sets": {"EN_STOP"},
    "char_sets": {"NOT_A_STORE_NAME", "FUNCTION_CHARS", "ZH_SINGLE_STOP"},
}  # fmt: skip


# The sections read apart; every other one is read as it is, under its name in capitals.
_READ_APART = {"_about", "docs", "patterns", "compiled", "word_sets", "char_sets", "typos"}


class WordsError(ValueError):
    """The word data is not usable: which list, and why."""


def _merged(data: dict, extra: dict) -> dict:
    for section in ("patterns", "compiled", "word_sets"):
        for name, added in (extra.get(section) or {}).items():
            if name not in data.get(section, {}):
                raise WordsError(f"{section}.{name}: no such list to add to")
            if not isinstance(added, list) or not all(isinstance(a, str) and a for a in added):
                raise WordsError(f"{section}.{name}: a list of non-empty strings is expected")
            data[section][name] = data[section][name] + added
    data["typos"].update(extra.get("typos") or {})
    return data


def _expanded(name: str, patterns: dict[str, list[str]], seen: tuple[str, ...] = ()) -> str:
    if name in seen:
        raise WordsError(f"patterns.{name}: refers to itself through {' -> '.join(seen)}")
    joined = "|".join(patterns[name])

    def expand(m: re.Match) -> str:
        if m.group(1) not in patterns:
            return m.group(0)
        return _expanded(m.group(1), patterns, (*seen, name))

    return _REF.sub(expand, joined)


def load(path: Path = SOURCE, extra_path: str | None = None) -> dict:
    """The word lists as the assistant uses them: patterns as strings, the two compiled ones, sets."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if extra_path:
        data = _merged(data, json.loads(Path(extra_path).read_text(encoding="utf-8")))
    for section, names in REQUIRED.items():
        if missing := names - set(data.get(section) or {}):
            raise WordsError(f"{section}: missing {', '.join(sorted(missing))}")
    out: dict = {}
    for name, alternatives in data["patterns"].items():
        if not alternatives or not all(isinstance(a, str) and a for a in alternatives):
            raise WordsError(f"patterns.{name}: a list of non-empty alternatives is expected")
        out[name] = _expanded(name, data["patterns"])
    out.update({name: "|".join(alternatives) for name, alternatives in data["compiled"].items()})
    periods = [(kind, pattern) for pattern, kind in data["periods"]]
    limits = [("row_limits", pattern) for pattern in data["row_limits"]]
    for name, pattern in [*out.items(), *data["tool_words"], *data["units"].items(), *periods, *limits]:
        try:
            re.compile(pattern.replace("{N}", "1"))  # {N}: the number said in a period or a row limit
        except re.error as exc:
            raise WordsError(f"{name}: not a valid pattern ({exc})") from None
    out["ZH_STOP_WORDS"] = re.compile(out["ZH_STOP_WORDS"])
    out["PRODUCTION_LINE"] = re.compile(out["PRODUCTION_LINE"], re.I)
    out.update({name: set(words) for name, words in data["word_sets"].items()})
    out.update({name: set(chars) for name, chars in data["char_sets"].items()})
    out["TYPOS"] = {k.lower(): v for k, v in data["typos"].items()}
    out.update({section.upper(): value for section, value in data.items() if section not in _READ_APART})
    return out


globals().update(load(extra_path=os.environ.get("INVENTORY_AI_OFFLINE_WORDS")))

# One word of a request, to count how much it says: an English word or one Chinese character.
WORD = r"[a-z]+|[\u4e00-\u9fff]"
_TYPO = re.compile(r"\b(" + "|".join(map(re.escape, TYPOS)) + r")\b", re.I)  # noqa: F821 (loaded above)
_PINYIN_RES = [(re.compile(p, re.I), hanzi) for p, hanzi in PINYIN]  # noqa: F821


def filled(pattern: str, pieces: dict[str, str]) -> str:
    """A pattern of the "dates" or "slots" data with its {PIECE}s (a number, a unit, a month) in."""
    return re.sub(r"\{([A-Z_]+)\}", lambda m: pieces[m.group(1)], pattern)


def typos_fixed(text: str) -> str:
    """Typos of the words requests turn on, read as meant ("pls ordr 500kg…", "main warehose")."""
    return _TYPO.sub(lambda m: TYPOS[m.group(1).lower()], text)  # noqa: F821


def from_pinyin(text: str) -> str:
    """The request with its pinyin request words as characters, when it is typed in pinyin ("xisha
    tang dao le 4 dai, ru ku"): only a request with no Chinese characters and two or more of them."""
    if re.search(r"[\u4e00-\u9fff]", text) or sum(bool(p.search(text)) for p, _h in _PINYIN_RES) < 2:
        return text
    for pattern, hanzi in _PINYIN_RES:
        text = pattern.sub(hanzi or (lambda m: PINYIN_DIGITS[m.group(0).lower()]), text)  # noqa: F821
    return text
