"""API tokens carry scopes (read, chat, decide, admin), and approving a booking is a person's act:
a session with its CSRF token, or a token issued with `decide` on purpose. An agent holding the
token it was given (the default scopes) cannot approve the booking it proposed itself."""

from __future__ import annotations

import re
from decimal import Decimal

import flask_migrate
from flask_login import login_required
from sqlalchemy import event, select, text

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken, ChatMessage, User
from tests.support.clients import AuthActions
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use
from tests.support.stock import level

M001 = "高筋面粉 (M001)"


def signed_in(app, username: str):
    client = app.test_client()
    assert AuthActions(client).login(username).status_code == 200
    return client


def issued(client, **asked) -> dict:
    """A token issued through the API by the signed-in `client`; the response's body."""
    response = client.post("/api/v1/auth/tokens", json={"name": "agent", **asked})
    assert response.status_code == 201, response.json
    return response.json


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def refused_for_scope(response, scope: str | None) -> bool:
    error = response.json["error"]
    challenge = response.headers.get("WWW-Authenticate", "")
    return (
        response.status_code == 403
        and error["code"] == "insufficient_scope"
        and (scope is None or f'scope="{scope}"' in challenge)
        and 'error="insufficient_scope"' in challenge
    )


# --- the issue's reproduction: an agent approving its own booking --------------------------------


def test_an_agents_token_cannot_approve_the_booking_it_proposed(app, client, auth):
    """Stock 97, the agent asks to book 1 kg out with the token the user gave it, then approves
    it with the same token: refused (403, `decide` named), through the API and through the page's
    form alike, and stock stays 97. The user, signed in, approves it: 96."""
    admin = signed_in(app, "admin")
    three_out = {**booking(3), "unit": "kg"}
    assert admin.post("/api/v1/admin/stock/movements", json=three_out).status_code == 201
    assert level() == Decimal("97")

    auth.login("staff")
    agent = bearer(issued(client)["token"])  # what the user gives an agent: the default scopes
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库1公斤"}, headers=agent).json
    assert asked["status"] == "awaiting_confirmation" and level() == Decimal("97")
    message_id = asked["message_id"]

    by_api = client.post(
        f"/api/v1/chat/messages/{message_id}/decision", json={"decision": "approve"}, headers=agent
    )
    assert refused_for_scope(by_api, "decide") and "decide" in by_api.json["error"]["message"]
    by_form = client.post(f"/messages/{message_id}/decision", data={"decision": "approve"}, headers=agent)
    assert by_form.status_code == 403 and by_form.json["error"]["code"] == "insufficient_scope"
    assert level() == Decimal("97")
    assert db.session.get(ChatMessage, message_id).status == "awaiting_confirmation"

    # The user (a session whose writes carry the CSRF token) decides; without the token, no.
    decision = f"/api/v1/chat/messages/{message_id}/decision"
    csrf_token = client.environ_base.pop("HTTP_X_CSRFTOKEN")
    refused = client.post(decision, json={"decision": "approve"})
    assert refused.status_code == 400 and refused.json["error"]["code"] == "csrf_failed"
    assert level() == Decimal("97")
    done = client.post(decision, json={"decision": "approve"}, headers={"X-CSRFToken": csrf_token})
    assert done.status_code == 200 and done.json["status"] == "completed" and level() == Decimal("96")


def test_a_token_issued_with_decide_decides(app, client, auth):
    """A person's own script, given `decide` on purpose, approves and rejects as the user."""
    auth.login("staff")
    script = bearer(issued(client, scopes=["read", "chat", "decide"])["token"])
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库2公斤"}, headers=script).json
    done = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"}, headers=script
    )
    assert done.status_code == 200 and done.json["status"] == "completed" and level() == Decimal("98")


def test_sign_off_needs_a_session_or_a_decide_token(app):
    """A staff booking above the sign-off value waits for a manager: the manager's default token
    (an agent's) is refused at the API and at the page's form, and nothing is booked; a token the
    manager issued with `decide` signs it off."""

    def step(request):
        if request.messages[-1].role == "user":
            return calls(call("record_stock_movement", booking(1000, "inbound"), "call_model"))
        return answer("结果：" + request.messages[-1].content)

    use(app, ScriptedProvider(*[step] * 6))
    staff = signed_in(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "收货 1000 公斤高筋面粉"}).json
    decided = staff.post(f"/api/v1/chat/messages/{body['message_id']}/decision", json={"decision": "approve"})
    assert decided.json["status"] == "awaiting_signoff"
    call_id = decided.json["rounds"][0]["tool_calls"][0]["id"]

    manager = signed_in(app, "manager")
    agent = bearer(issued(manager)["token"])
    assert manager.get("/api/v1/approvals", headers=agent).status_code == 200  # reading is `read`
    by_api = manager.post(
        f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"}, headers=agent
    )
    assert refused_for_scope(by_api, "decide")
    by_form = manager.post(f"/approvals/{call_id}/decision", data={"decision": "approve"}, headers=agent)
    assert by_form.status_code == 403 and level() == Decimal("100")

    person = bearer(issued(manager, scopes=["read", "decide"])["token"])
    signed = manager.post(
        f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"}, headers=person
    )
    assert signed.status_code == 200 and level() == Decimal("1100")


# --- issuing: defaults, what may be asked for, listings ---------------------------------------


def test_a_new_token_reads_and_chats_and_gets_more_only_when_asked(client, auth):
    auth.login("staff")
    default = issued(client)
    assert default["scopes"] == ["read", "chat"]
    assert issued(client, scopes=["decide", "read"])["scopes"] == ["read", "decide"]
    listed = {t["id"]: t["scopes"] for t in client.get("/api/v1/auth/tokens").json}
    assert listed[default["id"]] == ["read", "chat"]

    unknown = client.post("/api/v1/auth/tokens", json={"name": "x", "scopes": ["read", "write"]})
    assert unknown.status_code == 422 and "'write'" in str(unknown.json["error"]["details"])
    empty = client.post("/api/v1/auth/tokens", json={"name": "x", "scopes": []})
    assert empty.status_code == 422
    not_admin = client.post("/api/v1/auth/tokens", json={"name": "x", "scopes": ["admin"]})
    assert not_admin.status_code == 422 and "admin" in not_admin.json["error"]["message"]
    assert len(client.get("/api/v1/auth/tokens").json) == 2  # the refused ones issued nothing


def test_an_admins_token_gets_admin_only_when_asked(client, auth):
    auth.login("admin")
    assert issued(client)["scopes"] == ["read", "chat"]
    assert issued(client, scopes=["read", "admin"])["scopes"] == ["read", "admin"]


def test_a_token_cannot_issue_itself_a_scope_it_lacks(client, auth):
    """Otherwise an agent would issue itself a `decide` token and approve its bookings with it."""
    auth.login("staff")
    agent = bearer(issued(client)["token"])
    auth.logout()
    client.environ_base.pop("HTTP_X_CSRFTOKEN", None)
    escalated = client.post("/api/v1/auth/tokens", json={"name": "mine", "scopes": ["decide"]}, headers=agent)
    assert escalated.status_code == 403 and escalated.json["error"]["code"] == "insufficient_scope"
    assert "decide" in escalated.json["error"]["message"]
    same = client.post("/api/v1/auth/tokens", json={"name": "rotated"}, headers=agent)
    assert same.status_code == 201 and same.json["scopes"] == ["read", "chat"]
    narrower = client.post("/api/v1/auth/tokens", json={"name": "reader", "scopes": ["read"]}, headers=agent)
    assert narrower.status_code == 201
    reader = bearer(narrower.json["token"])
    assert client.post("/api/v1/auth/tokens", json={"name": "wider"}, headers=reader).status_code == 403


def test_a_password_change_takes_no_token(client, auth):
    auth.login("staff")
    every = bearer(issued(client, scopes=["read", "chat", "decide"])["token"])
    changed = client.post(
        "/api/v1/auth/password",
        json={"current_password": "demo-password", "new_password": "another-password"},
        headers=every,
    )
    assert refused_for_scope(changed, None)


def test_a_read_only_token_reads_and_does_nothing_else(client, auth):
    auth.login("staff")
    reader = bearer(issued(client, scopes=["read"])["token"])
    assert client.get("/api/v1/conversations", headers=reader).status_code == 200
    assert client.get("/api/v1/auth/me", headers=reader).status_code == 200
    asked = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}, headers=reader)
    assert refused_for_scope(asked, "chat")
    chatter = bearer(issued(client, scopes=["chat"])["token"])
    assert refused_for_scope(client.get("/api/v1/conversations", headers=chatter), "read")


# --- the admin API's writes need `admin` -------------------------------------------------------


def admin_writes(app) -> list[tuple[str, str]]:
    out = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/admin/"):
            path = re.sub(r"<(?:int:)?[a-z_]+>", lambda m: "1" if "int:" in m.group(0) else "M001", rule.rule)
            out += [(method, path) for method in sorted(rule.methods - {"GET", "HEAD", "OPTIONS"})]
    return out


def test_admin_writes_need_the_admin_scope_and_reads_read(app, client, auth):
    auth.login("admin")
    default = bearer(issued(client)["token"])
    writes = admin_writes(app)
    assert ("POST", "/api/v1/admin/stock/movements") in writes and len(writes) > 10
    for method, path in writes:
        response = client.open(path, method=method, json={}, headers=default)
        assert refused_for_scope(response, "admin"), (method, path, response.status_code)
    assert client.get("/api/v1/admin/users", headers=default).status_code == 200
    admin = bearer(issued(client, scopes=["read", "admin"])["token"])
    created = {"username": "lihua", "password": "a-long-secret", "role": "warehouse_staff"}
    assert client.post("/api/v1/admin/users", json=created, headers=admin).status_code == 201


# --- one table, deny by default ----------------------------------------------------------------


def test_every_route_declares_what_a_token_needs(app):
    """A view added without a line in auth.TOKEN_RULES fails here (and refuses every token)."""
    from inventory_ai.auth import TOKEN_RULES, token_rule  # here: the module runs on older code too

    missing = [
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"})
        if token_rule(rule.endpoint, method) is None
    ]
    assert missing == []
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    assert set(TOKEN_RULES) <= endpoints, set(TOKEN_RULES) - endpoints  # no stale lines either
    spec = app.test_client().get("/api/openapi.json").json
    adapter = app.url_map.bind("localhost")
    for path, operations in spec["paths"].items():
        for method in operations:
            if method.upper() in ("GET", "POST", "PUT", "PATCH", "DELETE"):
                url = re.sub(r"\{[a-z_]+\}", "1", path)
                endpoint, _ = adapter.match(url, method=method.upper())
                assert token_rule(endpoint, method.upper()) is not None, (method, path)


def test_a_view_missing_from_the_table_refuses_every_token(app_with):
    app = app_with()

    @login_required
    def undeclared():
        return {"ok": True}

    app.add_url_rule("/api/v1/undeclared", "undeclared", undeclared, methods=["GET", "POST"])
    with app.app_context():
        client = app.test_client()
        assert AuthActions(client).login("admin").status_code == 200
        assert client.get("/api/v1/undeclared").json == {"ok": True}  # a session: as before
        everything = bearer(issued(client, scopes=["read", "chat", "decide", "admin"])["token"])
        for method in ("GET", "POST"):
            assert refused_for_scope(
                client.open("/api/v1/undeclared", method=method, headers=everything), None
            )


def test_a_cached_token_is_refused_without_a_query(client, auth):
    """The scopes travel with the token in auth's cache: a refusal costs no database statement."""
    auth.login("staff")
    agent = bearer(issued(client)["token"])
    assert client.get("/api/v1/conversations", headers=agent).status_code == 200  # now cached
    statements = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(db.engine, "before_cursor_execute", listen)
    try:
        refused = client.post("/api/v1/chat/messages/x/decision", json={"decision": "approve"}, headers=agent)
    finally:
        event.remove(db.engine, "before_cursor_execute", listen)
    assert refused_for_scope(refused, "decide") and statements == []


# --- tokens issued before scopes existed --------------------------------------------------------


def test_tokens_from_before_the_migration_read_and_chat_admins_also_admin_none_decides(
    databases, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    url = databases.fresh()
    try:
        app = create_app(config_for_tests(url))
        with app.app_context():
            flask_migrate.downgrade(revision="0008")
            users = dict(db.session.execute(text("SELECT username, id FROM users")).all())
            for username in ("staff", "admin"):
                db.session.execute(
                    text(
                        "INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at) "
                        "VALUES (:user, 'old script', :hash, 'iai_old', CURRENT_TIMESTAMP)"
                    ),
                    {"user": users[username], "hash": f"{username:0<64}"},
                )
            db.session.commit()
            flask_migrate.upgrade()
            scopes = {
                token.user.username: token.scope_list
                for token in db.session.scalars(select(ApiToken).join(User))
            }
            assert scopes == {"staff": ["read", "chat"], "admin": ["read", "chat", "admin"]}
            db.session.remove()
            db.engine.dispose()
    finally:
        databases.drop(url)


def test_options_answers_without_a_scope(client, auth):
    """OPTIONS runs no view (the Allow header, a CORS preflight): nothing to refuse."""
    auth.login("staff")
    reader = bearer(issued(client, scopes=["read"])["token"])
    assert client.options("/api/v1/chat", headers=reader).status_code == 200
