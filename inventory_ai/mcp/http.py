"""`/mcp`: MCP over Streamable HTTP inside the Flask app, in the same gunicorn gthread workers.

Every request is authenticated here, by its own `Authorization: Bearer iai_…` (the same token rule
as the API, auth.user_for_token), before the SDK sees it: 401 otherwise. The token must carry the
`chat` scope and neither `decide` nor `admin` (auth.TOKEN_RULES, checked before this view runs):
403 otherwise. A session cookie is not
enough (this is for agents, and a cookie is an ambient credential), so CSRF does not apply; CORS
stays closed (no Access-Control-* headers), and a browser page of another origin is refused (403).

Stateless: each POST is one self-contained exchange, with no `Mcp-Session-Id`. The SDK keeps a
session in the memory of one process, and gunicorn's workers share none, so a session opened on one
worker would be unknown to the next (why, and what a client gives up: docs/mcp.md).

The SDK's transport is an ASGI app. One event loop per process, in a thread started on the first
/mcp request (after gunicorn forked), runs it; a2wsgi hands each request's environ to it and
collects its answer.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from io import BytesIO
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, current_app, request

from inventory_ai.auth import authenticated_user
from inventory_ai.errors import error_response
from inventory_ai.extensions import db
from inventory_ai.models import User

bp = Blueprint("mcp", __name__)

EXTENSION_KEY = "inventory_ai.mcp_http"
USER_KEY = "inventory_ai.mcp_user_id"  # in the environ handed to the SDK: who this request is


@bp.route("/mcp", methods=["GET", "POST", "DELETE"])
def serve():
    if not request.headers.get("Authorization", "").startswith("Bearer "):
        return _unauthorized("send Authorization: Bearer <API token>")
    user = authenticated_user()
    if user is None:
        return _unauthorized("the API token is unknown, revoked or expired, or its user is deactivated")
    origin = request.headers.get("Origin")
    if origin and urlsplit(origin).netloc != request.host:
        return error_response(403, "forbidden", "/mcp does not answer pages of other origins")
    if request.method == "GET":  # stateless: no stream to listen on (the SDK would hold one open)
        response = error_response(405, "method_not_allowed", "POST MCP messages to /mcp; there is no stream")
        response.headers["Allow"] = "POST, DELETE"
        return response
    user_id = user.id
    # End this request's transaction (a POST took SQLite's write lock up front, auth.pipeline.protect_writes):
    # the work runs on the SDK's thread with a session of its own.
    db.session.commit()
    environ = dict(request.environ)
    body = request.get_data(cache=True)  # read already by the guard at the door (errors.py)
    environ.update({"wsgi.input": BytesIO(body), "CONTENT_LENGTH": str(len(body)), USER_KEY: user_id})
    return _bridge(current_app._get_current_object()).answer(environ)


def _unauthorized(message: str):
    response = error_response(401, "unauthorized", message)
    response.headers["WWW-Authenticate"] = 'Bearer realm="inventory_ai"'
    return response


def _user_of_request(ctx) -> User:
    user_id = ctx.request.scope["wsgi_environ"][USER_KEY]
    return db.session.get(User, user_id)


class Bridge:
    """The SDK's Streamable HTTP transport on this process's event loop, answering WSGI environs."""

    def __init__(self, app: Flask):
        # The SDK and its web stack load here, on the first /mcp request, not at every worker start.
        from a2wsgi import ASGIMiddleware
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from inventory_ai.mcp.server import WarehouseServer

        server = WarehouseServer(app, _user_of_request)
        self.manager = StreamableHTTPSessionManager(app=server.server, stateless=True, json_response=True)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="mcp-http", daemon=True).start()
        started: Future = Future()
        asyncio.run_coroutine_threadsafe(self._run(started), self.loop)
        started.result(timeout=30)
        self.wsgi = ASGIMiddleware(self.manager.handle_request, loop=self.loop)

    async def _run(self, started: Future) -> None:
        async with self.manager.run():  # for the life of the process
            started.set_result(None)
            await asyncio.Event().wait()

    def answer(self, environ: dict) -> Response:
        answered = {}

        def start_response(status, headers, exc_info=None):
            answered.update(status=status, headers=headers)

        body = b"".join(self.wsgi(environ, start_response))  # one JSON reply per request
        return Response(body, status=answered["status"], headers=answered["headers"])


_starting = threading.Lock()


def _bridge(app: Flask) -> Bridge:
    bridge = app.extensions.get(EXTENSION_KEY)
    if bridge is None:
        with _starting:
            bridge = app.extensions.get(EXTENSION_KEY)
            if bridge is None:
                bridge = app.extensions[EXTENSION_KEY] = Bridge(app)
    return bridge


def init_mcp(app: Flask) -> None:
    app.register_blueprint(bp)
