"""MCP clients are agents: their token must not be able to approve bookings, and nothing in MCP
approves one. A token with `decide` is refused by both transports; a client that answers
elicitation forms by itself books nothing. Driven by the official SDK's client, as an agent runs it."""

from __future__ import annotations

from decimal import Decimal

import anyio
import mcp_types as types
import pytest
import requests

from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, User
from tests.support.bookings import MCP_BOOKING as BOOKING
from tests.support.clients import AuthActions
from tests.support.mcp_clients import http_headers, http_session, served_with_tokens, stdio_session, text
from tests.support.stock import level

DECIDES = ("read", "chat", "decide")


def token_for(username: str, **options) -> str:
    _, plain = issue_token(db.session.query(User).filter_by(username=username).one(), "mcp", **options)
    db.session.commit()
    return plain


# --- stdio ------------------------------------------------------------------------------------


def test_a_client_that_accepts_every_form_books_nothing(app, client, database_url, tmp_path):
    """The agent's client says "approve" to any form it is shown: the booking still waits, for
    the user on the page the result names, and is booked only when the user approves it there."""
    plain = token_for("manager")
    forms = []

    async def approves_everything(context, params: types.ElicitRequestParams):
        forms.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True, "reason": "ok"})

    async def agent():
        async with stdio_session(
            database_url, plain, tmp_path / "mcp.log", elicitation_callback=approves_everything
        ) as session:
            return text(await session.call_tool("record_stock_movement", BOOKING))

    waiting = anyio.run(agent)
    assert waiting["status"] == "awaiting_approval" and level() == Decimal("100")
    assert db.session.get(ChatMessage, waiting["message_id"]).status == "awaiting_confirmation"
    assert forms == []  # nothing asked the client to decide
    assert waiting["approve_at"] == f"/c/{waiting['conversation_id']}"
    assert "cannot approve" in waiting["message"]

    AuthActions(client).login("manager")
    page = client.get(waiting["approve_at"])
    assert page.status_code == 200 and waiting["tool_call_id"] in page.get_data(as_text=True)
    form = {"decision": "approve", "tool_call_id": waiting["tool_call_id"]}
    decided = client.post(f"/messages/{waiting['message_id']}/decision", data=form)
    assert decided.status_code == 302 and level() == Decimal("95")


@pytest.mark.parametrize(
    ("scopes", "says"),
    [
        (DECIDES, "`decide` scope"),
        (("read", "chat", "decide", "admin"), "`decide` scope"),
        (("read", "chat", "admin"), "`admin` scope"),  # it books through the admin API, unapproved
        (("read",), "`chat`"),
    ],
)
def test_the_stdio_command_refuses_a_token_that_can_decide_or_administer_or_cannot_chat(
    app, runner, scopes, says
):
    username = "admin" if "admin" in scopes else "manager"
    app.extensions["inventory_ai.config"].mcp_token = plain = token_for(username, scopes=scopes)
    result = runner.invoke(args=["mcp"])
    assert result.exit_code == 2 and "INVENTORY_AI_MCP_TOKEN" in result.output and says in result.output
    assert plain not in result.output


def test_an_agent_started_with_a_decide_token_gets_no_session(app, database_url, tmp_path):
    """As an agent starts it: the SDK's client gets no MCP session, the reason is on stderr."""
    plain = token_for("staff", scopes=DECIDES)
    log = tmp_path / "mcp.log"

    async def agent():
        async with stdio_session(database_url, plain, log) as session:
            await session.list_tools()

    with pytest.raises(Exception):  # noqa: B017 (the SDK's client: the connection closed, in a group)
        anyio.run(agent)
    assert "`decide` scope" in log.read_text() and plain not in log.read_text()


# --- Streamable HTTP ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(databases, tmp_path_factory):
    """(base URL, the app on the server's database, tokens by what they may do, the server)."""

    def tokens() -> dict:
        return {
            "agent": token_for("staff"),
            "decides": token_for("staff", scopes=DECIDES),
            "reads": token_for("staff", scopes=("read",)),
            "administers": token_for("admin", scopes=("read", "chat", "admin")),
        }

    yield from served_with_tokens(databases, tmp_path_factory.mktemp("mcp_scopes"), tokens, workers=1)


def test_mcp_over_http_refuses_a_token_that_can_decide_or_administer(served):
    base, _, tokens, _ = served
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = requests.post(f"{base}/mcp", json=ping, headers=http_headers(tokens["decides"]), timeout=10)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "decide_scope_refused"
    admin = requests.post(f"{base}/mcp", json=ping, headers=http_headers(tokens["administers"]), timeout=10)
    assert admin.status_code == 403 and admin.json()["error"]["code"] == "admin_scope_refused"
    no_chat = requests.post(f"{base}/mcp", json=ping, headers=http_headers(tokens["reads"]), timeout=10)
    assert no_chat.status_code == 403 and no_chat.json()["error"]["code"] == "insufficient_scope"
    assert 'scope="chat"' in no_chat.headers["WWW-Authenticate"]

    async def agent(token: str) -> list[str]:
        async with http_session(base, token) as session:
            return [t.name for t in (await session.list_tools()).tools]

    assert "record_stock_movement" in anyio.run(agent, tokens["agent"])
    with pytest.raises(ExceptionGroup):  # the SDK's client: the server refused the handshake
        anyio.run(agent, tokens["decides"])


def test_a_booking_over_http_waits_and_its_agent_cannot_approve_it(served):
    base, app, tokens, _ = served
    with app.app_context():
        before = level()

    async def agent():
        async with http_session(base, tokens["agent"]) as session:
            return text(await session.call_tool("record_stock_movement", BOOKING))

    waiting = anyio.run(agent)
    assert waiting["status"] == "awaiting_approval" and waiting["approve_at"].startswith("/c/")
    decision = f"{base}/api/v1/chat/messages/{waiting['message_id']}/decision"
    refused = requests.post(
        decision, json={"decision": "approve"}, headers=http_headers(tokens["agent"]), timeout=30
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "insufficient_scope"
    with app.app_context():
        assert level() == before
        assert db.session.get(ChatMessage, waiting["message_id"]).status == "awaiting_confirmation"
