"""POST /api/v1/chat and friends over HTTP: auth, CSRF, tokens, ownership, decisions, errors, and each
user's rate limit."""

from __future__ import annotations

import json
import os
import time
from decimal import Decimal
from pathlib import Path

from sqlalchemy import func, select

from inventory_ai.auth import issue_token
from inventory_ai.models import Material, StockLevel, utcnow
from tests.support.scripted import ScriptedProvider, answer, use


def m001(session) -> Decimal:
    session.expire_all()
    return session.scalar(select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == "M001"))


def test_chat_needs_a_login(client):
    response = client.post("/api/v1/chat", json={"message": "hi"})
    assert response.status_code == 401 and response.json["error"]["code"] == "unauthorized"


def test_bad_credentials_are_401_and_audited(client, session):
    response = client.post("/api/v1/auth/login", json={"username": "staff", "password": "wrong-password"})
    assert response.status_code == 401 and response.json == {
        "error": {"code": "invalid_credentials", "message": "wrong username or password"}
    }


def test_the_offline_assistant_answers_the_seed_example(client, auth):
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json
    assert body["status"] == "completed"
    assert body["rounds"][0]["tool_calls"][0]["name"] == "search_materials"
    assert body["rounds"][0]["tool_calls"][0]["arguments"] == {"keyword": "面粉"}
    # One line: how many and the best match; the rows are the result, drawn as a table, not repeated.
    assert "13" in body["reply"] and "高筋面粉 (M001)" in body["reply"] and "低筋面粉" not in body["reply"]
    found = json.loads(body["rounds"][0]["results"][0]["content"])
    assert [m["code"] for m in found["materials"][:2]] == ["M001", "M002"]
    low = client.post("/api/v1/chat", json={"message": "what is running low?"}).json
    assert low["rounds"][0]["tool_calls"][0]["name"] == "list_low_stock"
    # One line in words; the rows themselves are in the result (the page draws them as a table).
    assert low["reply"].startswith(
        "16 materials are below their reorder point; the most urgent is Cocoa Mass (M136)"
    )
    assert len(json.loads(low["rounds"][0]["results"][0]["content"])["items"]) == 10


def test_booking_through_the_api_with_approval(client, auth, session):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    assert asked["status"] == "awaiting_confirmation"
    pending = asked["pending"][0]
    assert pending["description"] == "出库 20 kg 高筋面粉 (M001)，主仓库"
    assert m001(session) == Decimal("100")
    done = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}
    ).json
    assert done["status"] == "completed" and "100 → 80" in done["reply"]
    assert m001(session) == Decimal("80")
    again = client.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"})
    assert again.status_code == 409 and m001(session) == Decimal("80")


def test_rejecting_through_the_api(client, auth, session):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "book out 5 kg M001"}).json
    done = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision",
        json={"decision": "reject", "tool_call_id": asked["pending"][0]["tool_call_id"]},
    ).json
    assert done["status"] == "completed" and "nothing was booked" in done["reply"]
    assert m001(session) == Decimal("100")


def test_decision_with_a_bad_body_is_422_listing_fields(client, auth):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "book out 5 kg M001"}).json
    response = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "maybe"}
    )
    assert response.status_code == 422
    assert response.json["error"]["code"] == "validation_error" and "decision" in json.dumps(
        response.json["error"]["details"]
    )


def test_another_users_conversation_and_message_are_404(client, auth, app):
    auth.login("staff")
    mine = client.post("/api/v1/chat", json={"message": "book out 5 kg M001"}).json
    auth.logout()
    auth.login("manager")
    assert (
        client.post(
            "/api/v1/chat", json={"message": "hi", "conversation_id": mine["conversation_id"]}
        ).status_code
        == 404
    )
    assert client.get(f"/api/v1/conversations/{mine['conversation_id']}").status_code == 404
    assert client.get(f"/api/v1/chat/messages/{mine['message_id']}").status_code == 404
    assert (
        client.post(
            f"/api/v1/chat/messages/{mine['message_id']}/decision", json={"decision": "approve"}
        ).status_code
        == 404
    )
    assert client.post(f"/api/v1/chat/messages/{mine['message_id']}/cancel").status_code == 404


def test_a_follow_up_in_the_same_conversation_and_history(client, auth):
    auth.login("staff")
    first = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json
    client.post("/api/v1/chat", json={"message": "M001 详情", "conversation_id": first["conversation_id"]})
    history = client.get(f"/api/v1/conversations/{first['conversation_id']}").json
    assert [m["role"] for m in history["messages"]] == ["user", "assistant", "user", "assistant"]
    assert history["messages"][3]["rounds"][0]["tool_calls"][0]["name"] == "get_material_detail"
    listing = client.get("/api/v1/conversations").json
    assert listing[0]["id"] == first["conversation_id"]


def test_empty_and_oversized_messages_are_refused(client, auth):
    auth.login("staff")
    assert client.post("/api/v1/chat", json={"message": ""}).status_code == 422
    assert client.post("/api/v1/chat", json={"message": "x" * 5000}).status_code == 422
    assert client.post("/api/v1/chat", json={"text": "hi"}).status_code == 422
    bad = client.post("/api/v1/chat", data="{not json", content_type="application/json")
    assert bad.status_code in (400, 422) and "error" in bad.json


def test_cookie_writes_need_the_csrf_token(client):
    client.post("/api/v1/auth/login", json={"username": "staff", "password": "demo-password"})
    refused = client.post("/api/v1/chat", json={"message": "hi"})
    assert refused.status_code == 400 and refused.json["error"]["code"] == "csrf_failed"


def test_bearer_tokens_work_without_csrf_and_stop_when_revoked(client, session, user):
    token, plain = issue_token(user("staff"), "script")
    session.commit()
    headers = {"Authorization": f"Bearer {plain}"}
    response = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}, headers=headers)
    assert response.status_code == 200 and response.json["status"] == "completed"
    assert plain not in json.dumps(response.json)
    assert client.delete(f"/api/v1/auth/tokens/{token.id}", headers=headers).status_code == 204
    assert client.post("/api/v1/chat", json={"message": "hi"}, headers=headers).status_code == 401
    assert (
        client.post(
            "/api/v1/chat", json={"message": "hi"}, headers={"Authorization": "Bearer nonsense"}
        ).status_code
        == 401
    )


def test_a_token_revoked_by_another_worker_is_refused_at_once(app, client, session, user):
    """A token is checked against the database once every few seconds; a revocation made by
    another worker process of the same server (it touches the instance folder's marker) applies
    on the next request here all the same."""
    token, plain = issue_token(user("staff"), "script")
    session.commit()
    headers = {"Authorization": f"Bearer {plain}"}
    assert client.get("/api/v1/conversations", headers=headers).status_code == 200
    token.revoked_at = utcnow()  # written by the other worker...
    session.commit()
    marker = Path(app.instance_path) / "tokens-changed"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    os.utime(marker, ns=(time.time_ns(), time.time_ns() + 1))  # ...which then marks the change
    assert client.get("/api/v1/conversations", headers=headers).status_code == 401


def test_deactivated_users_are_locked_out(client, auth, session, user):
    auth.login("staff")
    staff = user("staff")
    staff.active = False
    session.commit()
    assert client.post("/api/v1/chat", json={"message": "hi"}).status_code == 401
    assert auth.login("staff").status_code == 401


def test_cancel_endpoint_on_a_waiting_booking(client, auth, session):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "book out 5 kg M001"}).json
    cancelled = client.post(f"/api/v1/chat/messages/{asked['message_id']}/cancel").json
    assert cancelled["status"] == "cancelled" and m001(session) == Decimal("100")


def test_openapi_document_describes_the_chat_api(client):
    spec = client.get("/api/openapi.json").json
    assert "/api/v1/chat" in spec["paths"] and "/api/v1/chat/messages/{message_id}/decision" in spec["paths"]


def test_web_login_page_and_form_flow(client):
    page = client.get("/login").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    response = client.post(
        "/login", data={"username": "staff", "password": "demo-password", "csrf_token": token}
    )
    assert response.status_code == 302
    chat = client.get("/").get_data(as_text=True)
    token = chat.split('name="csrf_token" value="')[1].split('"')[0]
    answered = client.post(
        "/ask", data={"message": "帮我查找面粉原料", "csrf_token": token}, follow_redirects=True
    )
    assert "高筋面粉 (M001)" in answered.get_data(as_text=True)
    assert client.post("/ask", data={"message": "hi"}).status_code == 400  # no CSRF token


def test_chat_is_rate_limited_per_user(app, client, auth):
    app.config["CHAT_RATE_LIMIT"] = "3 per minute"
    use(app, ScriptedProvider(*[answer("ok")] * 3))
    auth.login("staff")
    for _ in range(3):
        assert client.post("/api/v1/chat", json={"message": "hi"}).status_code == 200
    limited = client.post("/api/v1/chat", json={"message": "hi"})
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    assert limited.json["error"]["code"] == "too_many_requests"
