"""Bad bytes at the door and in the records: chunked bodies meet the same guard as any other, stored
arguments no view can serialise are shown as text, admin time filters at the edges of the calendar
are a 422, and no error echoes its input at length (to a client, or to the model)."""

from __future__ import annotations

import io
import json

import pytest

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.types import ModelReply, ToolCall, Usage
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, User
from inventory_ai.strict_json import loads_or_text
from tests.support.scripted import ScriptedProvider, answer, call, calls, use

# --- 1. one guard at the door sees every body, chunked ones included -----------------------------

HOSTILE = {
    "lone surrogate": (b'{"username": "x\\ud800y", "password": "p"}', "invalid_json"),
    "100k nested [": (b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
    "5000-digit number": (b'{"username": ' + b"9" * 5000 + b', "password": "p"}', "invalid_json"),
    "escaped NUL": (b'{"username": "x\\u0000y", "password": "p"}', "invalid_text"),
    "NaN": (b'{"username": NaN, "password": "p"}', "invalid_json"),
}


def chunked(client, path: str, body: bytes, **kwargs):
    """A body sent as a server that speaks chunked transfer hands it on: no Content-Length, and
    the stream ended by the server (gunicorn sets wsgi.input_terminated)."""
    return client.open(
        path,
        method="POST",
        input_stream=io.BytesIO(body),
        headers={
            "Transfer-Encoding": "chunked",
            "Content-Type": "application/json",
            **kwargs.pop("headers", {}),
        },
        environ_overrides={"wsgi.input_terminated": True},
        **kwargs,
    )


@pytest.mark.parametrize("label", list(HOSTILE))
def test_a_chunked_malformed_body_is_a_400_before_login(client, label):
    body, code = HOSTILE[label]
    response = chunked(client, "/api/v1/auth/login", body)
    assert response.status_code == 400, response.get_data(as_text=True)[:200]
    assert response.json["error"]["code"] == code and response.json["error"]["message"]


@pytest.mark.parametrize(
    "path", ["/api/v1/chat", "/api/v1/auth/tokens", "/api/v1/admin/users", "/api/v1/admin/stock/movements"]
)
def test_a_chunked_malformed_body_is_a_400_on_every_json_endpoint(client, auth, path):
    auth.login("admin")
    asked = {"name": "chunked", "scopes": ["read", "chat", "admin"]}  # the admin API's writes need `admin`
    token = client.post("/api/v1/auth/tokens", json=asked).json["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    for label in ("lone surrogate", "100k nested [", "5000-digit number"):
        body, code = HOSTILE[label]
        response = chunked(client, path, body, headers=bearer)
        assert response.status_code == 400, (label, response.get_data(as_text=True)[:200])
        assert response.json["error"]["code"] == code


def test_a_chunked_body_past_the_size_limit_is_a_413_not_a_cut_body(client):
    big = b'{"username": "' + b"a" * (2 * 1024 * 1024) + b'", "password": "p"}'
    response = chunked(client, "/api/v1/auth/login", big)
    assert response.status_code == 413
    assert response.json["error"]["code"] == "request_entity_too_large"


def test_a_well_formed_chunked_body_still_logs_in(client):
    response = chunked(client, "/api/v1/auth/login", b'{"username": "staff", "password": "demo-password"}')
    assert response.status_code == 200 and response.json["username"] == "staff"


# --- 2. stored arguments that are no usable JSON are shown as text, never a 500 ------------------


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


# --- 17. admin time filters outside the calendar once in UTC -------------------------------------


@pytest.mark.parametrize(
    "query", ["since=9999-12-31T23:59:59-12:00", "until=0001-01-01T00:00:00%2B14:00"], ids=["since", "until"]
)
@pytest.mark.parametrize("path", ["/api/v1/admin/stock/movements", "/api/v1/admin/audit-events"])
def test_a_time_filter_outside_the_years_1_to_9999_in_utc_is_a_422(client, auth, path, query):
    auth.login("admin")
    response = client.get(f"{path}?{query}")
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert "outside the years 1-9999" in response.json["error"]["message"]


def test_time_filters_within_the_calendar_still_filter(client, auth):
    auth.login("admin")
    assert client.get("/api/v1/admin/stock/movements?since=0001-01-01T00:00:00").json["total"] > 0
    assert client.get("/api/v1/admin/stock/movements?since=9999-12-31T00:00:00%2B00:00").json["total"] == 0


# --- 20. no error echoes its input at length ------------------------------------------------------


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
