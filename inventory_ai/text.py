"""Text as the warehouse writes it: which language a message is in, and text the database can keep.

One definition of "Chinese characters" for the whole product: CJK Unified Ideographs, Extension A
and the compatibility block (a few materials are written with those).
"""

from __future__ import annotations

import re

CJK = "\u3400-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK}]+")


def has_cjk(text: str | None) -> bool:
    return bool(CJK_RUN.search(text or ""))


def language_of(text: str | None) -> str:
    """zh when the text has any Chinese character, else en."""
    return "zh" if has_cjk(text) else "en"


LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# Latin-letter tokens that are nobody's language: units and their abbreviations as both languages
# write them ("出库 20 kg" is Chinese). Codes (M001, WH02, 25kg) hold a digit and are not words.
NEUTRAL_WORDS = frozenset({"kg", "kgs", "g", "t", "l", "ml", "pcs", "pc", "ea", "cm", "mm", "cc"})


def question_language(text: str | None, page_language: str) -> str:
    """The language a question is written in, which its answer follows: zh for Chinese words and no
    English ones, en for English words and no Chinese; for mixed text ("how much 高筋面粉 is left",
    "M001 stock 多少") and for text of neither (a code, a number), the page's language.

    Two languages written in two scripts need no statistical detector: py3langid (a PyPI langid
    model), tried on the warehouse's questions, said "show me 低筋面粉" was Chinese at 0.996 and took
    2.2 s to load its model; the rule above says plainly what happens to a mixed question."""
    text = text or ""
    chinese = has_cjk(text)
    english = any(
        word.lower() not in NEUTRAL_WORDS and not _beside_digit(text, match)
        for match in LATIN_WORD.finditer(text)
        if (word := match.group())
    )
    if chinese and not english:
        return "zh"
    if english and not chinese:
        return "en"
    return page_language if page_language in ("zh", "en") else "zh"


def _beside_digit(text: str, match: re.Match) -> bool:
    """A word glued to a digit is part of a code or an amount (M001, 25kg, 3L), not a word."""
    start, end = match.span()
    return (start > 0 and text[start - 1].isdigit()) or (end < len(text) and text[end].isdigit())


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str | None) -> str | None:
    """Text from a model or a user as the database can keep and UTF-8 can carry: NUL (PostgreSQL
    refuses it) and lone surrogates (no UTF-8 encoding exists) become U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text) if text else text


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None
