"""JSON as the product accepts it: strict, and small enough to be handled by anything downstream.

One reader for request bodies (errors.py guards every request with it) and the same walks of a
parsed value for tool arguments (assistant/tool_calls.py): no absurd nesting, no numbers of thousands
of digits, no NaN, no text the database cannot keep (NUL, lone surrogates).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from inventory_ai.text import is_storable

MAX_DEPTH = 32
MAX_NUMBER_CHARS = 40


class Unreadable(ValueError):
    """The bytes are not JSON this product takes; the message says why, for a 400."""


def _number(text: str, kind):
    if len(text) > MAX_NUMBER_CHARS:
        raise Unreadable(f"a number of {len(text)} characters; at most {MAX_NUMBER_CHARS}")
    return kind(text)


def _constant(name: str):
    raise Unreadable(f"{name} is not a JSON number")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def _nested_deeper(text: str, max_depth: int) -> bool:
    """Whether brackets outside strings open more than `max_depth` deep: checked before parsing, so
    that what is refused never depends on the parser reaching the interpreter's recursion limit."""
    level = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", text)):
        level = level + 1 if bracket in "[{" else level - 1
        if level > max_depth:
            return True
    return False


def loads(raw: bytes | str, max_depth: int = MAX_DEPTH):
    """Parse JSON strictly, or raise Unreadable saying what is wrong."""
    try:
        # decoded as json.loads decodes bytes (UTF-8, its BOM, UTF-16/32), before the nesting scan
        text = (
            raw.decode(json.detect_encoding(raw), "surrogatepass")
            if isinstance(raw, bytes | bytearray)
            else raw
        )
    except UnicodeDecodeError:
        raise Unreadable("the body is not UTF-8 text") from None
    if _nested_deeper(text, max_depth):
        raise Unreadable(f"nested more than {max_depth} levels deep")
    try:
        value = json.loads(
            text,
            parse_int=lambda s: _number(s, int),
            parse_float=lambda s: _number(s, float),
            parse_constant=_constant,
        )
    except Unreadable:
        raise
    except RecursionError:
        raise Unreadable(f"nested more than {max_depth} levels deep") from None
    except UnicodeDecodeError:
        raise Unreadable("the body is not UTF-8 text") from None
    except ValueError as exc:
        raise Unreadable(f"not valid JSON ({str(exc)[:100]})") from None
    if depth(value) > max_depth:
        raise Unreadable(f"nested more than {max_depth} levels deep")
    if not all(is_storable(text) for text in strings(value)):
        raise Unreadable("text must not contain NUL characters or unpaired surrogates")
    return value


def loads_or_text(raw: str | None):
    """Stored JSON (a call's arguments) as a value when it is JSON this product takes; anything else
    (not JSON, absurdly nested, numbers of thousands of digits) stays the text it was, never parsed
    again into something a view cannot serialise."""
    try:
        return loads(raw or "{}")
    except Unreadable:
        return raw


def strings(value) -> Iterator[str]:
    """Every string in a parsed JSON value (or a value as tools return it, tuples too), keys
    included, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def depth(value) -> int:
    """How deeply lists and objects nest in a parsed JSON value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
