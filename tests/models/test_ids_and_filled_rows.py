"""Ids made without the UUID object, and rows filled as an INSERT of them writes them
(database.filled): what the loop stores for every message, made in its hot path."""

from __future__ import annotations

import uuid

from inventory_ai.database import filled
from inventory_ai.models import ChatMessage, Conversation, MessageStatus, ModelCall, new_call_id, new_id


def test_an_id_is_a_random_version_4_uuid_as_uuid4_hex_writes_it():
    made = [new_id() for _ in range(500)]
    assert len(set(made)) == 500
    for text in made:
        parsed = uuid.UUID(hex=text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert parsed.hex == text  # 32 lower-case hex digits, no dashes
    call = new_call_id()
    assert call.startswith("call_") and len(call) == 29 and uuid.UUID(hex=call[5:] + "0" * 8).version == 4


def test_a_filled_row_has_every_column_in_order_with_its_defaults():
    [row] = filled(ChatMessage, [{"conversation_id": "c", "role": "user", "content": "hi", "language": "en"}])
    assert list(row) == [c.key for c in ChatMessage.__table__.columns]
    assert uuid.UUID(hex=row["id"]).version == 4 and row["created_at"] is not None  # called per row
    assert row["status"] == MessageStatus.COMPLETED.value  # a value default
    assert (row["input_tokens"], row["cancel_requested"], row["error_code"]) == (0, False, None)


def test_a_value_given_as_none_gets_its_default_and_a_key_no_column_has_is_dropped():
    rows = filled(ModelCall, [
        {"message_id": "m", "user_id": 1, "provider": "p", "model": "x", "status": "success",
         "input_tokens": None, "output_tokens": 7, "not_a_column": "dropped"},
        {"message_id": "m", "user_id": 1, "provider": "p", "model": "x", "status": "error"},
    ])  # fmt: skip
    assert "not_a_column" not in rows[0] and "id" not in rows[0]  # the database gives the id
    assert [(r["input_tokens"], r["output_tokens"], r["duration_ms"]) for r in rows] == [(0, 7, 0), (0, 0, 0)]
    given = filled(Conversation, [{"id": "kept", "user_id": 1, "title": "t"}, {"user_id": 1, "title": "u"}])
    assert given[0]["id"] == "kept" and given[1]["id"] != given[0]["id"]
