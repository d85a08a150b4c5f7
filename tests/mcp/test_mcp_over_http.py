"""/mcp driven by the official MCP SDK's client over Streamable HTTP, against gunicorn as `make serve`
runs it (two gthread workers, so one client's requests land on either: the server is stateless).
One server and one seeded database for the module; each test leaves the settings as it found them."""

from __future__ import annotations

from decimal import Decimal

import anyio
import pytest
import requests
from mcp.shared.exceptions import MCPError
from sqlalchemy import func, select

from inventory_ai.assistant.extension import manager
from inventory_ai.auth import issue_token
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.database import begin_write
from inventory_ai.extensions import db
from inventory_ai.models import ROLES, Material, StockLevel, ToolSetting, User
from tests.support.mcp_clients import (
    as_listed,
    as_the_model_sees,
    http_headers,
    http_session,
    modern_http_client,
    served_with_tokens,
    text,
)

USERS = {
    "warehouse_staff": "staff",
    "warehouse_manager": "manager",
    "purchaser": "purchaser",
    "admin": "admin",
}


@pytest.fixture(scope="module")
def warehouse(databases, tmp_path_factory):
    """(base URL, the app on the server's database, an API token per role, the server)."""

    def tokens() -> dict:
        return {
            role: issue_token(db.session.query(User).filter_by(username=username).one(), "mcp")[1]
            for role, username in USERS.items()
        }

    yield from served_with_tokens(databases, tmp_path_factory.mktemp("mcp_http"), tokens)


def level(app, code: str = "M001") -> Decimal:
    with app.app_context():
        return db.session.scalar(
            select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == code)
        )


def test_every_request_needs_its_own_valid_bearer_token(warehouse):
    base, app, tokens, _ = warehouse
    https = {"X-Forwarded-Proto": "https"}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    missing = requests.post(f"{base}/mcp", json=hello, headers=https, timeout=10)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert missing.json()["error"]["code"] == "unauthorized"
    forged = requests.post(f"{base}/mcp", json=hello, headers=http_headers("iai_not-a-token"), timeout=10)
    assert forged.status_code == 401

    # A logged-in browser's cookie is not a credential here (and so no CSRF token is asked for).
    browser = requests.Session()
    login = {"username": "staff", "password": "demo-password"}
    assert browser.post(f"{base}/api/v1/auth/login", json=login, headers=https, timeout=10).ok
    assert browser.post(f"{base}/mcp", json=hello, headers=https, timeout=10).status_code == 401

    staff = http_headers(tokens["warehouse_staff"])
    other_origin = requests.post(
        f"{base}/mcp", json=hello, headers={**staff, "Origin": "https://elsewhere.example"}, timeout=10
    )
    assert other_origin.status_code == 403
    preflight = requests.options(
        f"{base}/mcp",
        headers={**https, "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"},
        timeout=10,
    )
    assert "Access-Control-Allow-Origin" not in preflight.headers  # CORS closed
    assert requests.get(f"{base}/mcp", headers=staff, timeout=10).status_code == 405  # stateless: no stream


def test_each_role_lists_exactly_its_tools_in_either_protocol_era(warehouse):
    """The 2025 handshake (what Qwen-Agent and most clients speak) for every role, and the SDK's
    default client (2026-07-28, no handshake) for staff: the toolbox the model would get."""
    base, app, tokens, _ = warehouse
    with app.app_context():
        expected = {
            role: as_the_model_sees(manager().registry.toolbox_for(role, db.session)) for role in ROLES
        }

    async def agents():
        listed = {}
        for role in ROLES:
            async with http_session(base, tokens[role]) as session:
                listed[role] = as_listed((await session.list_tools()).tools)
        async with modern_http_client(base, tokens["warehouse_staff"]) as client:
            assert client.session.protocol_version == "2026-07-28"
            listed["modern staff"] = as_listed((await client.list_tools()).tools)
        return listed

    listed = anyio.run(agents)
    assert listed.pop("modern staff") == expected["warehouse_staff"]
    assert listed == expected
    assert "create_new_intent" in [name for name, *_ in listed["admin"]]
    assert "record_stock_movement" not in [name for name, *_ in listed["purchaser"]]


def test_a_read_returns_real_data_and_a_forged_disabled_or_badly_called_tool_is_refused(warehouse):
    base, app, tokens, server = warehouse
    settings_changed = ChangeMarker(
        server.instance_path, "tool-settings-changed"
    ).mark  # as the admin API does
    with app.app_context():
        begin_write(db.session)
        db.session.add(
            ToolSetting(tool_name="get_stock_movements", allowed_roles=["warehouse_manager", "admin"])
        )
        db.session.commit()
        settings_changed()

    async def agent():
        async with http_session(base, tokens["warehouse_staff"]) as session:
            found = text(await session.call_tool("search_materials", {"keyword": "面粉"}))
            forged = await session.call_tool("create_purchase_request", {"material": "M001", "quantity": 1})
            disabled = await session.call_tool("get_stock_movements", {"material": "M001"})
            listed = [t.name for t in (await session.list_tools()).tools]
            bad = await session.call_tool("list_low_stock", {"limit": 0, "colour": "red"})
            low = await session.read_resource("inventory://low-stock")
            return found, forged, disabled, listed, bad, low

    try:
        found, forged, disabled, listed, bad, low = anyio.run(agent)
    finally:
        with app.app_context():
            begin_write(db.session)
            db.session.query(ToolSetting).delete()
            db.session.commit()
            settings_changed()
    first = found["materials"][0]
    assert (first["code"], first["name"], first["unit"]) == ("M001", "高筋面粉", "kg")
    for refused in (forged, disabled):
        assert refused.is_error and text(refused)["error"]["type"] == "PermissionDenied"
    assert "get_stock_movements" not in listed
    message = text(bad)["error"]["message"]
    assert bad.is_error and "limit" in message and "colour" in message
    assert '"items"' in low.contents[0].text


def test_a_booking_waits_for_the_users_approval_then_is_booked_once(warehouse):
    base, app, tokens, _ = warehouse
    booking = {"material": "M001", "warehouse": "主仓库", "movement_type": "outbound", "quantity": 5,
               "unit": "kg", "reason": "MCP over HTTP"}  # fmt: skip
    before = level(app)

    async def agent():
        async with http_session(base, tokens["warehouse_staff"]) as session:
            return await session.call_tool("record_stock_movement", booking)

    result = anyio.run(agent)
    waiting = text(result)
    assert not result.is_error and waiting["status"] == "awaiting_approval"
    assert waiting["description"] == "出库 5 kg 高筋面粉 (M001)，主仓库" and waiting["tool_call_id"]
    assert level(app) == before

    api = http_headers(tokens["warehouse_staff"])
    [pending] = requests.get(f"{base}/api/v1/chat/pending", headers=api, timeout=10).json()
    assert pending["tool_call_id"] == waiting["tool_call_id"] and pending["source"] == "mcp"
    decision = f"{base}/api/v1/chat/messages/{waiting['message_id']}/decision"
    # The agent's own token cannot approve it (no `decide`): the user does, here with a script's
    # token issued with `decide` (a person's; docs/mcp.md).
    refused = requests.post(decision, json={"decision": "approve"}, headers=api, timeout=30)
    assert refused.status_code == 403 and level(app) == before
    with app.app_context():
        staff = db.session.query(User).filter_by(username="staff").one()
        person = http_headers(issue_token(staff, "person", scopes=("read", "decide"))[1])
        db.session.commit()
    approved = requests.post(decision, json={"decision": "approve"}, headers=person, timeout=30)
    assert approved.json()["status"] == "completed" and level(app) == before - 5
    again = requests.post(decision, json={"decision": "approve"}, headers=person, timeout=30)
    assert again.status_code == 409 and level(app) == before - 5


def test_a_revoked_token_is_refused(warehouse):
    base, app, _, _ = warehouse
    with app.app_context():
        token, plain = issue_token(
            db.session.query(User).filter_by(username="purchaser").one(), "short-lived"
        )
        db.session.commit()
        token_id = token.id

    async def agent():
        async with http_session(base, plain) as session:
            return [t.name for t in (await session.list_tools()).tools]

    assert "search_materials" in anyio.run(agent)
    revoked = requests.delete(
        f"{base}/api/v1/auth/tokens/{token_id}", headers=http_headers(plain), timeout=10
    )
    assert revoked.ok
    refused = requests.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers=http_headers(plain),
        timeout=10,
    )
    assert refused.status_code == 401
    with pytest.raises(ExceptionGroup) as failed:  # the SDK's client: the server refused the handshake
        anyio.run(agent)
    assert failed.group_contains(MCPError, depth=None)
