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
