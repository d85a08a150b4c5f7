"""A stored answer as the chat API shows it (shared by the JSON endpoint, history and the web page)."""

from __future__ import annotations

import json

from inventory_ai.models import CallStatus, ChatMessage


def parsed_arguments(raw: str):
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw
    return value


def message_view(message: ChatMessage) -> dict:
    rounds, pending = [], []
    for stored in message.rounds:
        calls, results = [], []
        for call in stored.calls:
            calls.append(
                {"id": call.call_id, "name": call.name, "arguments": parsed_arguments(call.arguments)}
            )
            if call.status == CallStatus.PENDING_CONFIRMATION:
                pending.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "arguments": parsed_arguments(call.arguments),
                        "description": call.description or "",
                    }
                )
            else:
                results.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "status": call.status,
                        "content": call.content or "",
                    }
                )
        rounds.append(
            {"assistant_response": stored.assistant_response, "tool_calls": calls, "results": results}
        )
    return {
        "conversation_id": message.conversation_id,
        "message_id": message.id,
        "status": message.status,
        "reply": message.content,
        "rounds": rounds,
        "pending": pending,
        "usage": {"input_tokens": message.input_tokens, "output_tokens": message.output_tokens},
    }


# Result tables for people: the rows a tool returned, in columns a warehouse reads.
# (field in the result row, column label key in web/i18n.py)
TABLE_COLUMNS = {
    "materials": [
        ("code", "code"),
        ("name", "name"),
        ("stock", "quantity"),
        ("unit", "unit"),
        ("warehouse", "warehouse"),
    ],
    "items": [
        ("code", "code"),
        ("name", "name"),
        ("quantity", "quantity"),
        ("reorder_point", "reorder_point"),
        ("unit", "unit"),
    ],
    "movements": [
        ("date", "date"),
        ("code", "code"),
        ("name", "name"),
        ("type", "type"),
        ("quantity", "quantity"),
        ("unit", "unit"),
        ("warehouse", "warehouse"),
    ],
}


def result_table(content: str) -> dict | None:
    """{"columns": [label keys], "rows": [[cells]]} for a result with rows, else None."""
    try:
        data = json.loads(content or "")
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    for key, columns in TABLE_COLUMNS.items():
        rows = data.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            shaped = []
            for row in rows:
                cells = []
                for field, _label in columns:
                    if field == "warehouse" and not row.get("warehouse"):
                        cells.append("，".join(f"{w} {q}" for w, q in (row.get("warehouses") or {}).items()))
                    else:
                        cells.append(row.get(field, ""))
                shaped.append(cells)
            return {"columns": [label for _field, label in columns], "rows": shaped}
    return None
