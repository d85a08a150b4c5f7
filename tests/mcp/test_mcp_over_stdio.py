"""`flask --app wsgi mcp` driven by the official MCP SDK's client over stdio, as an agent runs it: a
subprocess against this test's seeded database, acting as the user of INVENTORY_AI_MCP_TOKEN."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from inventory_ai.assistant.extension import manager
from inventory_ai.auth import issue_token
from inventory_ai.database import begin_write
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken, ToolSetting, utcnow
from tests.support.bookings import MCP_BOOKING as BOOKING
from tests.support.clients import AuthActions
from tests.support.mcp_clients import as_listed, as_the_model_sees, stdio_session, text
from tests.support.stock import level


def token_for(user, username: str, **options) -> tuple[ApiToken, str]:
    token, plain = issue_token(user(username), "mcp", **options)
    db.session.commit()
    return token, plain


async def reads_and_refusals(session) -> None:
    """A read with real data, a forged tool and bad arguments refused (every error listed), a
    resource and a prompt."""
    found = text(await session.call_tool("search_materials", {"keyword": "面粉"}))
    assert found["materials"][0]["code"] == "M001" and found["total"] > 1

    forged = await session.call_tool("create_new_intent", {"name": "x", "keywords": ["x"]})
    assert forged.is_error and text(forged)["error"]["type"] == "PermissionDenied"

    bad = await session.call_tool("list_low_stock", {"limit": 0, "colour": "red"})
    message = text(bad)["error"]["message"]
    assert bad.is_error and "limit" in message and "colour" in message

    material = await session.read_resource("inventory://materials/M001")
    assert '"code":"M001"' in material.contents[0].text
    prompt = await session.get_prompt("daily_stock_check", {"warehouse": "主仓库"})
    assert "list_low_stock" in prompt.messages[0].content.text


def test_a_staff_agent_gets_staff_tools_the_same_checks_and_approvals(
    app, client, database_url, user, tmp_path
):
    """One stdio session as staff: exactly the staff toolbox (names, descriptions, schemas as the
    model sees them), a read with real data, a resource and a prompt, a forged tool and bad
    arguments refused with every error listed; a booking that waits (approved later in the API,
    booked once); an admin switches a tool off and the client is told (tools/list_changed), lists
    again without it, and calling it is refused; a revoked token stops the next request."""
    token, plain = token_for(user, "staff")
    staff_tools = as_the_model_sees(manager().registry.toolbox_for("warehouse_staff", db.session))
    log = tmp_path / "mcp.log"

    async def agent():
        changed = anyio.Event()

        async def notices(message):
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        async with stdio_session(database_url, plain, log, message_handler=notices) as session:
            assert session.initialize_result.capabilities.tools.list_changed is True
            assert as_listed((await session.list_tools()).tools) == staff_tools

            await reads_and_refusals(session)

            booking = await session.call_tool("record_stock_movement", BOOKING)

            begin_write(db.session)  # the server wrote since this session last read (SQLite WAL)
            db.session.add(ToolSetting(tool_name="get_inventory_stats", enabled=False))
            db.session.commit()
            with anyio.fail_after(15):
                await changed.wait()
            names = [t.name for t in (await session.list_tools()).tools]
            assert "get_inventory_stats" not in names and "search_materials" in names
            off = await session.call_tool("get_inventory_stats", {})
            assert off.is_error and text(off)["error"]["type"] == "PermissionDenied"

            begin_write(db.session)
            token.revoked_at = utcnow()
            db.session.commit()
            with pytest.raises(MCPError, match="revoked"):
                await session.call_tool("search_materials", {"keyword": "面粉"})
            return booking

    booking = anyio.run(agent)
    assert plain not in log.read_text() and "Traceback" not in log.read_text()

    waiting = text(booking)
    assert not booking.is_error and waiting["status"] == "awaiting_approval"
    assert waiting["description"] == "出库 5 kg 高筋面粉 (M001)，主仓库"
    assert level() == Decimal("100")  # nothing booked by the call
    AuthActions(client).login("staff")
    [pending] = client.get("/api/v1/chat/pending").json
    assert pending["tool_call_id"] == waiting["tool_call_id"] and pending["source"] == "mcp"
    decision = f"/api/v1/chat/messages/{waiting['message_id']}/decision"
    assert client.post(decision, json={"decision": "approve"}).json["status"] == "completed"
    assert level() == Decimal("95")
    assert client.post(decision, json={"decision": "approve"}).status_code == 409
    assert level() == Decimal("95")


@pytest.mark.parametrize("unusable", ["missing", "revoked", "expired", "unknown"])
def test_the_command_refuses_a_missing_or_unusable_token_with_exit_2(app, runner, user, unusable):
    """`flask mcp` itself (in-process; the stdio tests above start it as a subprocess)."""
    token, plain = token_for(user, "staff")
    if unusable == "missing":
        plain = None
    elif unusable == "revoked":
        token.revoked_at = utcnow()
    elif unusable == "expired":
        token.expires_at = utcnow() - timedelta(minutes=1)
    else:
        plain = plain[:-4] + "xxxx"
    db.session.commit()
    app.extensions["inventory_ai.config"].mcp_token = plain
    result = runner.invoke(args=["mcp"])
    assert result.exit_code == 2 and "INVENTORY_AI_MCP_TOKEN" in result.output
    assert plain is None or plain not in result.output  # the token's prefix may be named, never it
    why = {"missing": "set INVENTORY_AI_MCP_TOKEN", "revoked": "was revoked", "expired": "expired"}
    assert why.get(unusable, "not a known API token") in result.output
