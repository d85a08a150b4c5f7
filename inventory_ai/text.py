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
    """zh when the text has any Chinese character, else en: the language the answer is written in."""
    return "zh" if has_cjk(text) else "en"


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str | None) -> str | None:
    """Text from a model or a user as the database can keep and UTF-8 can carry: NUL (PostgreSQL
    refuses it) and lone surrogates (no UTF-8 encoding exists) become U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text) if text else text


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None
