"""`flask --app wsgi mcp`: one MCP client on stdin/stdout, acting as the user whose API token is in
INVENTORY_AI_MCP_TOKEN (an agent that starts this command as its subprocess, docs/mcp.md).

The token is checked at start (a clear error and exit 2 otherwise) and again on every request, so a
token revoked while the client runs stops working at once. It must carry the `chat` scope and
neither `decide` nor `admin`: an agent that could approve its own bookings, or book through the
admin API, would make the approval meaningless. stdout carries the protocol only: our log
lines go to stderr.
"""

from __future__ import annotations

import anyio
from flask import Flask
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server

from inventory_ai.auth import agent_user
from inventory_ai.logging import get_logger
from inventory_ai.mcp.server import WarehouseServer

log = get_logger(__name__)

# How often the client's tool list is compared with what an admin's settings now give its user.
TOOLBOX_CHECK_SECONDS = 2.0


class ToolboxWatch:
    """Tells the client on this pipe when the tools it listed are no longer its user's tools (an
    admin switched one off or changed a role's grant, or the user's role changed):
    `notifications/tools/list_changed`, after which a client lists them again."""

    def __init__(self) -> None:
        self.session: ServerSession | None = None
        self.listed: tuple[str, ...] = ()

    def tools_listed(self, session: ServerSession, names: tuple[str, ...]) -> None:
        self.session, self.listed = session, names

    async def run(self, server: WarehouseServer, every: float) -> None:
        while True:
            await anyio.sleep(every)
            if self.session is None:
                continue  # the client has not listed any tools yet
            try:
                names = await server.tool_names()
            except Exception:  # a refused token or a busy database: the next request says so
                continue
            if names != self.listed:
                self.listed = names
                await self.session.send_tool_list_changed()


def serve_stdio(app: Flask, token: str, check_every: float = TOOLBOX_CHECK_SECONDS) -> None:
    watch = ToolboxWatch()
    server = WarehouseServer(
        app, lambda _ctx: agent_user(token, recently_checked=False), on_tools_listed=watch.tools_listed
    )

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
            tasks.start_soon(watch.run, server, check_every)
            await server.server.run(
                read_stream, write_stream, server.initialization_options(tools_change_notices=True)
            )
            tasks.cancel_scope.cancel()  # the client closed the pipe

    anyio.run(main)
    log.info("mcp_stdio_closed")
