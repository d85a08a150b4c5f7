"""A user's warehouses (issue 34): set by admins over the API and the CLI, shown by /auth/me, read
afresh on the user's next request; the seed's scoped demo users."""

from __future__ import annotations

from sqlalchemy import func, select

from inventory_ai.models import ChatMessage, ModelCall, User, Warehouse
from inventory_ai.services import sites
from tests.support.clients import AuthActions
from tests.support.databases import PASSWORD


def test_admins_set_warehouses_and_me_shows_them(app, client, auth):
    auth.login("admin")
    made = client.post(
        "/api/v1/admin/users",
        json={
            "username": "cold2",
            "password": "long-enough-1",
            "role": "warehouse_staff",
            "warehouses": ["wh02"],
        },
    )
    assert made.status_code == 201, made.json
    assert made.json["warehouses"] == ["WH02"]
    unscoped = client.post(
        "/api/v1/admin/users",
        json={"username": "all2", "password": "long-enough-1", "role": "warehouse_staff"},
    )
    assert unscoped.json["warehouses"] is None

    other = app.test_client()
    AuthActions(other).login("cold2", "long-enough-1")
    assert other.get("/api/v1/auth/me").json["warehouses"] == ["WH02"]

    # The change applies to the user's next request, without logging in again.
    changed = client.patch(f"/api/v1/admin/users/{made.json['id']}", json={"warehouses": ["WH01", "WH03"]})
    assert changed.status_code == 200 and changed.json["warehouses"] == ["WH01", "WH03"]
    assert other.get("/api/v1/auth/me").json["warehouses"] == ["WH01", "WH03"]
    client.patch(f"/api/v1/admin/users/{made.json['id']}", json={"warehouses": None})
    assert other.get("/api/v1/auth/me").json["warehouses"] is None


def test_unknown_warehouse_codes_are_422_naming_them(client, auth):
    auth.login("admin")
    bad = client.post(
        "/api/v1/admin/users",
        json={
            "username": "x2",
            "password": "long-enough-1",
            "role": "warehouse_staff",
            "warehouses": ["WH02", "WH9", "NOPE"],
        },
    )
    assert bad.status_code == 422
    assert "WH9" in bad.json["error"]["message"] and "NOPE" in bad.json["error"]["message"]
    staff = client.get("/api/v1/admin/users?role=warehouse_staff").json
    user_id = next(u["id"] for u in staff["items"] if u["username"] == "staff")
    for body in ({"warehouses": ["WH7"]}, {"warehouses": "WH02"}, {"warehouses": [1, {"a": 2}]}):
        assert client.patch(f"/api/v1/admin/users/{user_id}", json=body).status_code == 422, body


def test_token_users_are_scoped_on_their_next_request(app, client, auth, session):
    """A script's token: the user object is cached for a few seconds per worker, the warehouses
    are not (services/sites.of_user reads them each request)."""
    from inventory_ai.auth import issue_token

    coldstore = session.scalar(select(User).where(User.username == "coldstore"))
    _, plain = issue_token(coldstore, "script")
    session.commit()
    script = app.test_client()
    headers = {"Authorization": f"Bearer {plain}"}
    assert script.get("/api/v1/auth/me", headers=headers).json["warehouses"] == ["WH02"]
    auth.login("admin")
    client.patch(f"/api/v1/admin/users/{coldstore.id}", json={"warehouses": ["WH03"]})
    assert script.get("/api/v1/auth/me", headers=headers).json["warehouses"] == ["WH03"]


def test_create_user_takes_warehouses(runner, session):
    result = runner.invoke(
        args=[
            "create-user",
            "pack2",
            "--role",
            "warehouse_staff",
            "--warehouses",
            "WH02,wh03",
            "--password",
            "long-enough-1",
        ]
    )
    assert result.exit_code == 0, result.output
    assert session.scalar(select(User.warehouses).where(User.username == "pack2")) == ["WH02", "WH03"]
    refused = runner.invoke(
        args=[
            "create-user",
            "pack3",
            "--role",
            "warehouse_staff",
            "--warehouses",
            "WH08",
            "--password",
            "long-enough-1",
        ]
    )
    assert refused.exit_code != 0 and "WH08" in refused.output
    plain = runner.invoke(
        args=["create-user", "pack4", "--role", "warehouse_staff", "--password", "long-enough-1"]
    )
    assert (
        plain.exit_code == 0
        and session.scalar(select(User.warehouses).where(User.username == "pack4")) is None
    )


def test_seed_keeps_demo_users_unscoped_and_adds_scoped_ones(session, auth, client):
    scoped = dict(session.execute(select(User.username, User.warehouses)).all())
    assert all(scoped[name] is None for name in ("staff", "manager", "purchaser", "admin"))
    assert (
        scoped["coldstore"] == ["WH02"]
        and scoped["coldmanager"] == ["WH02"]
        and scoped["packaging"] == ["WH03"]
    )
    assert auth.login("coldstore", PASSWORD).status_code == 200
    assert sites.of_user(session, session.scalar(select(User).where(User.username == "coldstore"))).codes == {
        "WH02"
    }


def test_conversations_begun_before_a_warehouse_was_taken_away_no_longer_open(app, session):
    """They may hold that warehouse's figures (answers, and tool results the model would be sent
    again): after the change they are gone from the owner's list, search, pages and follow-ups;
    conversations begun after it stay, and widening the scope closes nothing."""

    def client_for(username):
        client = app.test_client()
        AuthActions(client).login(username)
        return client

    def asked(client, text, conversation_id=None):
        return client.post("/api/v1/chat", json={"message": text, "conversation_id": conversation_id})

    staff, admin = client_for("staff"), client_for("admin")
    before = asked(staff, "主仓的面粉库存").json
    listed = [c["id"] for c in staff.get("/api/v1/conversations").json]
    assert before["conversation_id"] in listed
    staff_id = session.scalar(select(User.id).where(User.username == "staff"))

    assert admin.patch(f"/api/v1/admin/users/{staff_id}", json={"warehouses": ["WH02"]}).status_code == 200
    old = before["conversation_id"]
    assert old not in [c["id"] for c in staff.get("/api/v1/conversations").json]
    assert old not in [c["id"] for c in staff.get("/api/v1/conversations?q=面粉").json]
    assert staff.get(f"/api/v1/conversations/{old}").status_code == 404
    assert staff.get(f"/api/v1/chat/messages/{before['message_id']}").status_code == 404
    assert asked(staff, "还有多少", old).status_code == 404  # the model is never sent it again
    assert staff.get(f"/c/{old}").status_code == 404

    after = asked(staff, "冷库有什么").json
    assert (
        admin.patch(f"/api/v1/admin/users/{staff_id}", json={"warehouses": ["WH02", "WH03"]}).status_code
        == 200
    )
    assert asked(staff, "还有吗", after["conversation_id"]).status_code == 200
    assert after["conversation_id"] in [c["id"] for c in staff.get("/api/v1/conversations").json]
    # The admins' view keeps everything.
    kept = admin.get(f"/api/v1/admin/conversations/{old}")
    assert kept.status_code == 200 and len(kept.json["messages"]) == 2


def test_a_closed_conversations_waiting_bookings_end_without_the_model_seeing_it_again(app, session):
    """A booking the owner had not confirmed yet is withdrawn when their conversation closes (they can
    no longer reach it); one waiting for a sign-off is still decided, and the answer ends with what
    happened instead of sending the closed conversation to the model."""
    staff_c, admin_c, manager_c = app.test_client(), app.test_client(), app.test_client()
    for client, name in ((staff_c, "staff"), (admin_c, "admin"), (manager_c, "manager")):
        AuthActions(client).login(name)
    first = staff_c.post("/api/v1/chat", json={"message": "冷库有什么库存"}).json
    conversation = first["conversation_id"]
    signed = staff_c.post(
        "/api/v1/chat", json={"message": "高筋面粉入库1000公斤", "conversation_id": conversation}
    )
    signed = signed.json
    decided = staff_c.post(
        f"/api/v1/chat/messages/{signed['message_id']}/decision", json={"decision": "approve"}
    )
    assert decided.json["status"] == "awaiting_signoff"
    unconfirmed = staff_c.post("/api/v1/chat", json={"message": "主仓出库高筋面粉2公斤"}).json
    assert unconfirmed["status"] == "awaiting_confirmation"
    staff_id = session.scalar(select(User.id).where(User.username == "staff"))
    model_calls = (
        select(func.count()).select_from(ModelCall).where(ModelCall.message_id == signed["message_id"])
    )
    asked_before = session.scalar(model_calls)

    # Every warehouse named one by one is no narrowing: nothing closes, nothing is withdrawn.
    every = sorted(session.scalars(select(Warehouse.code)))
    assert admin_c.patch(f"/api/v1/admin/users/{staff_id}", json={"warehouses": every}).status_code == 200
    assert staff_c.get(f"/api/v1/conversations/{conversation}").status_code == 200
    assert [p["message_id"] for p in staff_c.get("/api/v1/chat/pending").json] == [unconfirmed["message_id"]]

    assert admin_c.patch(f"/api/v1/admin/users/{staff_id}", json={"warehouses": ["WH01"]}).status_code == 200
    session.expire_all()
    withdrawn = session.get(ChatMessage, unconfirmed["message_id"])
    assert withdrawn.status == "cancelled"
    assert [c.status for r in withdrawn.rounds for c in r.calls] == ["declined"]
    assert staff_c.get("/api/v1/chat/pending").json == []

    call_id = signed["pending"][0]["tool_call_id"]
    approved = manager_c.post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"})
    assert approved.status_code == 200, approved.json
    session.expire_all()
    answer = session.get(ChatMessage, signed["message_id"])
    assert answer.status == "completed" and session.scalar(model_calls) == asked_before
