"""No error echoes its input at length: not to a client (a refused quantity, a validation detail), not to
the model (a tool's error result)."""

from __future__ import annotations

import json

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, User
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


def test_a_tiny_quantity_is_refused_in_a_short_message(client, auth):
    auth.login("admin")
    body = {"material": "M001", "warehouse": "主仓库", "movement_type": "inbound", "quantity": "1e-999999"}
    response = client.post("/api/v1/admin/stock/movements", json={**body, "reason": "r"})
    assert response.status_code == 422
    assert len(response.data) < 1000 and "at most 3 decimals" in response.json["error"]["message"]


def test_validation_details_never_echo_a_huge_field_name(client, auth):
    auth.login("admin")
    body = {
        "material": "M001",
        "warehouse": "主仓库",
        "movement_type": "inbound",
        "quantity": 1,
        "reason": "r",
    }
    response = client.post("/api/v1/admin/stock/movements", json={**body, "x" * 100_000: 1})
    assert response.status_code == 422
    assert len(response.data) < 3000


def _staff() -> User:
    return db.session.query(User).filter_by(username="staff").one()


def _run(app, *replies) -> tuple[ScriptedProvider, ChatMessage]:
    model = use(app, ScriptedProvider(*replies))
    turn = manager().prepare_message(db.session, _staff(), "查", None)
    list(manager().run(db.session, turn))
    return model, db.session.get(ChatMessage, turn.message_id)


def test_error_results_quote_at_most_a_short_part_of_what_the_model_sent(app):
    huge = "x" * 19_000
    booking = {"material": "M001", "warehouse": "主仓库", "movement_type": "inbound", "quantity": "1e-999999"}
    model, message = _run(
        app,
        calls(
            *[call("get_material_detail", {"material": huge}, f"c{i}") for i in range(5)],
            call(huge[:5000], {}, "c_name"),
            call("record_stock_movement", {**booking, "unit": "kg", "reason": "r"}, "c_booking"),
        ),
        answer("好"),
    )
    results = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert len(results) == 7
    for content in results:
        error = json.loads(content)["error"]
        assert len(error["message"]) <= 1100, error["message"][:100]
    assert "characters)" in json.loads(results[0])["error"]["message"]  # says it was cut
    assert all(len(c.content) <= 1200 for r in message.rounds for c in r.calls)
