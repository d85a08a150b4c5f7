"""Whatever a model sends, over HTTP: no 5xx, no answer left running, and the ledger holds exactly
the bookings whose approval succeeded, once each."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from inventory_ai.assistant.types import ModelReply, ToolCall, Usage
from inventory_ai.extensions import db
from inventory_ai.models import StockMovement, ToolCallRecord
from tests.support.clients import AuthActions, approve
from tests.support.scripted import ScriptedProvider, answer, use

NAMES = st.sampled_from(["record_stock_movement", "search_materials", "list_low_stock", "create_new_intent",
                         "rm_rf", "", "search_materials\x00", "\ud800"])  # fmt: skip
IDS = st.sampled_from(["call_dup", "", "call_\ud800", "call_x\x00", "call_1"]) | st.text(max_size=70)
BOOKING = st.fixed_dictionaries(
    {
        "material": st.sampled_from(["M001", "M002", "高筋面粉", "nothing", ""]),
        "warehouse": st.sampled_from(["主仓库", "WH02", "火星"]),
        "movement_type": st.sampled_from(["outbound", "inbound", "transfer", "adjustment"]),
        "quantity": st.one_of(
            st.integers(-5, 300), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)
        ),
        "reason": st.text(max_size=20),
    }
).map(lambda d: json.dumps(d, ensure_ascii=False))
ARGUMENTS = BOOKING | st.text(max_size=60) | st.just('{"keyword": "' + "[" * 3000 + '"}')
CALLS = st.lists(st.builds(ToolCall, IDS, NAMES, ARGUMENTS), min_size=0, max_size=4)
REPLIES = st.builds(
    lambda text, calls: ModelReply(text=text, tool_calls=tuple(calls), usage=Usage(1, 1)),
    st.text(max_size=40),
    CALLS,
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(first=REPLIES, second=REPLIES)
def test_any_model_output_ends_cleanly_and_books_exactly_what_was_approved(app, first, second):
    use(app, ScriptedProvider(first, second, answer("好"), answer("好"), answer("好")))
    app.config["CHAT_RATE_LIMIT"] = "10000 per minute"  # many examples, one user
    client = app.test_client()
    AuthActions(client).login("manager")
    body = client.post("/api/v1/chat", json={"message": "做点什么"})
    assert body.status_code == 200, body.get_data(as_text=True)[:200]
    view = body.json
    if view["status"] == "awaiting_confirmation":
        decided = approve(client, view["message_id"])
        assert decided.status_code == 200, decided.get_data(as_text=True)[:200]
        view = decided.json
    assert view["status"] not in ("running",), view["status"]
    db.session.expire_all()
    db.session.commit()
    booked = {
        m.idempotency_key
        for m in db.session.scalars(select(StockMovement).where(StockMovement.idempotency_key.like("chat:%")))
    }
    succeeded = {
        f"chat:{r.call_id}"
        for r in db.session.scalars(
            select(ToolCallRecord).where(
                ToolCallRecord.name == "record_stock_movement", ToolCallRecord.status == "success"
            )
        )
    }
    assert booked == succeeded
