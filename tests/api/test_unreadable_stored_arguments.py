"""Stored arguments that are no usable JSON are shown as text, never a 500: parsed strictly, and an answer
holding them can always be shown."""

from __future__ import annotations

import pytest

from inventory_ai.assistant.types import ModelReply, ToolCall, Usage
from inventory_ai.strict_json import loads_or_text
from tests.support.scripted import ScriptedProvider, answer, use


def test_stored_arguments_are_parsed_strictly_or_shown_as_text():
    assert loads_or_text('{"keyword": "面粉"}') == {"keyword": "面粉"}
    digits = '{"limit": ' + "9" * 5000 + "}"
    nested = '{"keyword": ' + "[" * 50_000 + "]" * 50_000 + "}"
    assert loads_or_text(digits) == digits
    assert loads_or_text(nested) == nested
    assert loads_or_text("not json") == "not json"


@pytest.mark.parametrize(
    "raw",
    ['{"limit": ' + "9" * 5000 + "}", '{"keyword": ' + "[" * 50_000 + "]" * 50_000 + "}"],
    ids=["5000-digit number", "nested 50k"],
)
def test_an_answer_with_unreadable_stored_arguments_can_always_be_shown(app, client, auth, raw):
    use(
        app,
        ScriptedProvider(
            ModelReply(
                text="",
                tool_calls=(ToolCall("c1", "list_low_stock", raw),),
                usage=Usage(1, 1),
                finish_reason="tool_calls",
            ),
            answer("好"),
        ),
    )
    auth.login("staff")
    posted = client.post("/api/v1/chat", json={"message": "低库存"})
    assert posted.status_code == 200, posted.get_data(as_text=True)[:300]
    [shown] = posted.json["rounds"][0]["tool_calls"]
    # As the model sent it (the loop keeps the first 20,000 characters of what is that long), as text.
    assert isinstance(shown["arguments"], str) and raw.startswith(shown["arguments"])
    assert posted.json["rounds"][0]["results"][0]["status"] == "error"
    conversation_id, message_id = posted.json["conversation_id"], posted.json["message_id"]
    assert client.get(f"/api/v1/conversations/{conversation_id}").status_code == 200
    assert client.get(f"/api/v1/chat/messages/{message_id}").status_code == 200
