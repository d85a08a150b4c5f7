"""Tool results fitted to a size budget without ever cutting JSON in the middle.

The largest list in the result is shortened (top rows kept: tools return rows most relevant first),
and the result says how many rows were left out, so the model can ask for more or narrow the query.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    """JSON as the model reads it (tool results, call arguments). "<" only ever occurs inside
    strings in JSON, and is written as its escape \\u003c: the same value once parsed, but no text
    in the records can spell a chat-template marker (<|im_end|>, </tool_response>) and so end the
    data it is part of, or open a turn of its own."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).replace("<", "\\u003c")


def _largest_list(value: dict) -> str | None:
    lists = [(len(dumps(v)), k) for k, v in value.items() if isinstance(v, list) and v]
    return max(lists)[1] if lists else None


def compact(result: Any, budget_chars: int) -> str:
    text = dumps(result)
    if len(text) <= budget_chars:
        return text
    if isinstance(result, dict):
        trimmed = dict(result)
        while len(text) > budget_chars:
            key = _largest_list(trimmed)
            if key is None:
                break
            rows = trimmed[key]
            keep = len(rows) // 2
            omitted = trimmed.get("omitted_rows", {}).get(key, 0) + len(rows) - keep
            trimmed[key] = rows[:keep]
            trimmed["omitted_rows"] = {**trimmed.get("omitted_rows", {}), key: omitted}
            trimmed["more_available"] = True
            text = dumps(trimmed)
        if len(text) <= budget_chars:
            return text
    if isinstance(result, list):
        return compact({"items": result}, budget_chars)
    # Nothing list-shaped to shorten (a long report text): say so rather than cut it.
    return dumps(
        {
            "error": {
                "type": "ResultTooLarge",
                "message": f"the result is {len(text)} characters, over the {budget_chars} budget; "
                "ask for fewer rows or a narrower filter",
            }
        }
    )
