"""The official MCP SDK's own client, connected the two ways an agent connects: `flask --app wsgi mcp`
as a subprocess (stdio), and /mcp of a real server (Streamable HTTP)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import mcp_types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from tests.support.databases import let_go
from tests.support.serving import REPO, serve_gunicorn

FLASK = Path(sys.executable).parent / "flask"


def served_with_tokens(
    databases, tmp_path: Path, make_tokens: Callable[[], dict], workers: int = 2
) -> Iterator[tuple]:
    """For a module's fixture: gunicorn on a fresh seeded database, with the API tokens
    `make_tokens()` issues there (in an app context). Yields (base URL, the app on the server's
    database, the tokens, the server); once stopped, its whole log holds no traceback and no token."""
    url = databases.fresh()
    app = create_app(config_for_tests(url))
    with app.app_context():
        tokens = make_tokens()
        db.session.commit()
        db.session.remove()
    try:
        for base, server in serve_gunicorn(url, tmp_path, workers=workers):
            yield base, app, tokens, server
        log = server.log_path.read_text()  # stopped: its whole log
        assert "Traceback" not in log and not any(token in log for token in tokens.values())
    finally:
        let_go(app)
        databases.drop(url)


def stdio_env(database_url: str, token: str | None) -> dict:
    env = {
        **os.environ,
        "INVENTORY_AI_DATABASE_URL": database_url,
        "INVENTORY_AI_SECRET_KEY": "mcp-test-secret-0123456789",
        "INVENTORY_AI_LLM_PROVIDER": "offline",
        "PYTHONPATH": str(REPO),
    }
    env.pop("INVENTORY_AI_MCP_TOKEN", None)
    if token is not None:
        env["INVENTORY_AI_MCP_TOKEN"] = token
    return env


@asynccontextmanager
async def stdio_session(
    database_url: str, token: str, log_path: Path, **client_options
) -> AsyncIterator[ClientSession]:
    """`flask --app wsgi mcp` as the agent starts it; its stderr (our log) goes to `log_path`."""
    server = StdioServerParameters(
        command=str(FLASK),
        args=["--app", "wsgi", "mcp"],
        env=stdio_env(database_url, token),
        cwd=str(log_path.parent),
    )
    with log_path.open("a") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write, **client_options) as session,
        ):
            await session.initialize()
            yield session


def http_headers(token: str) -> dict:
    # X-Forwarded-Proto: the test server runs in production mode behind "the TLS proxy" (127.0.0.1).
    return {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}


@asynccontextmanager
async def http_session(base: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=http_headers(token), timeout=30) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def modern_http_client(base: str, token: str) -> AsyncIterator[Client]:
    """The SDK's default client: it probes `server/discover` and speaks 2026-07-28 (no handshake)."""
    async with (
        httpx2.AsyncClient(headers=http_headers(token), timeout=30) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> dict:
    """A tool result's JSON (what the model would see)."""
    [content] = result.content
    return json.loads(content.text)


def as_listed(tools: list[types.Tool]) -> list[tuple]:
    return [(t.name, t.description, t.input_schema) for t in tools]


def as_the_model_sees(toolbox) -> list[tuple]:
    return [(s.name, s.description, s.parameters) for s in toolbox.specs()]
