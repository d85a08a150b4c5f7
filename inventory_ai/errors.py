"""Errors: JSON `{"error": {"code", "message", "details"}}` on /api/, HTML pages elsewhere.

No stack trace, path or secret ever leaves through here; unexpected errors are logged with the
request id and the client gets that id to quote.
"""

from __future__ import annotations

import sqlalchemy.exc
from flask import Flask, current_app, g, jsonify, request
from werkzeug.exceptions import HTTPException

from inventory_ai import strict_json
from inventory_ai.logging import get_logger

log = get_logger(__name__)


# What an error may quote of its input (a name, a quantity), and how long its message may be at
# all: a 9-character quantity or a 19,000-character name is never echoed back in full (to a client,
# or to the model as a tool result).
MAX_QUOTE_CHARS = 200
MAX_MESSAGE_CHARS = 1000


def clip(text: str, limit: int = MAX_QUOTE_CHARS) -> str:
    """`text` if it is short enough, else its start, an ellipsis and how long it was."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def quoted(value) -> str:
    """A value as an error message quotes it: repr-like, at most MAX_QUOTE_CHARS of it."""
    return repr(clip(value)) if isinstance(value, str) else clip(repr(value))


class DomainError(Exception):
    """A rule of the warehouse said no. Services raise these; tools and the API translate them."""

    code = "invalid_request"
    http_status = 400

    def __init__(self, message: str, details: dict | None = None):
        message = clip(message, MAX_MESSAGE_CHARS)
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidInput(DomainError):
    code = "invalid_input"
    http_status = 422


class NotFound(DomainError):
    code = "not_found"
    http_status = 404


class Conflict(DomainError):
    code = "conflict"
    http_status = 409


class Forbidden(DomainError):
    code = "forbidden"
    http_status = 403


class InsufficientStock(DomainError):
    code = "insufficient_stock"
    http_status = 409


def _clipped(details):
    """Field errors as webargs reports them, keyed by the client's own field names: a key or text of
    any length comes back clipped."""
    if isinstance(details, dict):
        return {clip(key) if isinstance(key, str) else key: _clipped(value) for key, value in details.items()}
    if isinstance(details, list | tuple):
        return [_clipped(value) for value in details]
    if isinstance(details, str):
        return clip(details, MAX_MESSAGE_CHARS)
    return details


def error_response(status: int, code: str, message: str, details: dict | None = None, headers=None):
    body = {"error": {"code": code, "message": clip(message, MAX_MESSAGE_CHARS)}}
    if details:
        body["error"]["details"] = _clipped(details)
    response = jsonify(body)
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _wants_json() -> bool:
    return request.path.startswith("/api/")


_NUL_MARKS = (b"\x00", b"\\u0000", b"%00")


def _malformed(code: str, message: str):
    if _wants_json():
        return error_response(400, code, message)
    return message, 400


def _end_transaction(_exc):
    """No request leaves a transaction behind, least of all one that failed half-way after taking
    the write lock: work that should persist was committed by the code that did it. The rollback
    never raises: on a connection the database ended (`pg_terminate_backend`, a restart) it fails,
    and a teardown that raised was gunicorn's HTML 500 with a raw traceback."""
    _let_go_of_session("teardown")


def _let_go_of_session(where: str) -> None:
    from inventory_ai.extensions import db

    try:
        db.session.rollback()
    except Exception as exc:  # the connection is gone: drop it and the session, say so in one line
        log.warning("rollback_failed", where=where, error_type=type(exc).__name__)
        try:
            db.session.remove()
        except Exception as again:
            log.warning("session_close_failed", where=where, error_type=type(again).__name__)


def _refuse_malformed():
    """One guard at the door for every request, logged in or not: NUL is not text (PostgreSQL
    refuses it in any column) wherever it appears (path, query, form, raw or escaped in a body),
    and a JSON body must be strict JSON within limits (strict_json.py): a clear 400, never a 500
    further in."""
    # Every body, however it came: with a Content-Length or chunked (no length: the server ends
    # the stream). werkzeug reads a chunked body only up to MAX_CONTENT_LENGTH; reading on
    # past it raises its 413, rather than a cut body being judged (or used) as the whole.
    raw = request.get_data(cache=True)
    if raw and request.content_length is None:
        request.stream.read(1)
    where = request.path.encode() + b"?" + request.query_string.lower() + b" " + raw.lower()
    # A form may already be parsed (the CSRF check reads it), leaving no raw body to look at.
    in_values = any("\x00" in value for values in request.values.listvalues() for value in values)
    if in_values or any(mark in where for mark in _NUL_MARKS):
        return _malformed("invalid_text", "text must not contain NUL characters")
    if raw and (request.is_json or (_wants_json() and not request.mimetype)):
        try:
            strict_json.loads(raw)
        except strict_json.Unreadable as exc:
            return _malformed("invalid_json", f"the body is not acceptable JSON: {exc}")
    return None


def _domain(exc: DomainError):
    return error_response(exc.http_status, exc.code, exc.message, exc.details)


def _http(exc: HTTPException):
    if not _wants_json():
        return exc  # pages: werkzeug's page, or the web blueprint's own (web/views.py: 429)
    headers = dict(exc.get_headers())
    headers.pop("Content-Type", None)
    code = (exc.name or "error").lower().replace(" ", "_")
    details = None
    # flask-smorest / webargs put field errors here for 422.
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and "messages" in data:
        details = data["messages"]
    message = exc.description if isinstance(exc.description, str) else exc.name
    if exc.code == 422:
        message = "validation failed: see details for each field"
        code = "validation_error"
    return error_response(exc.code or 500, code, message, details, headers)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _database_failed(exc: sqlalchemy.exc.OperationalError):
    """A connection the database ended mid-request (`connection_invalidated`): a safe read is run
    once more, on a new connection; anything else, or a second failure, is 503 with Retry-After."""
    if not (exc.connection_invalidated and request.method in SAFE_METHODS and not g.get("db_retried")):
        return _database_busy(exc)
    g.db_retried = True
    log.warning("database_connection_lost", error_type=type(exc).__name__, retried=True)
    _let_go_of_session("retry")
    try:
        return current_app.dispatch_request()
    except sqlalchemy.exc.OperationalError as again:
        return _database_busy(again)


def _database_error(exc: sqlalchemy.exc.DBAPIError):
    """Other driver errors (InterfaceError on a connection already closed): a lost connection is
    handled as above; the rest are unexpected."""
    if exc.connection_invalidated:
        return _database_failed(exc)
    return _unexpected(exc)


def _database_busy(exc: Exception):
    # Every pooled connection stayed busy past pool_timeout, SQLite's write lock stayed taken past
    # busy_timeout, or the database did not answer: overload or an outage, not a bug. Say so.
    _let_go_of_session("database_busy")
    log.warning("database_busy", error_type=type(exc).__name__)
    message = "the server is busy; please retry in a few seconds"
    if _wants_json():
        response = error_response(503, "busy", message)
    else:
        response = current_app.make_response((message, 503))
    response.headers["Retry-After"] = "5"
    return response


def _unexpected(exc: Exception):
    log.exception("unhandled_error", error_type=type(exc).__name__)
    request_id = g.get("request_id", "")
    message = f"internal error; quote request id {request_id}"
    if _wants_json():
        return error_response(500, "internal_error", message)
    return message, 500


def init_errors(app: Flask) -> None:
    app.teardown_request(_end_transaction)
    app.before_request(_refuse_malformed)
    app.errorhandler(DomainError)(_domain)
    app.errorhandler(HTTPException)(_http)
    app.errorhandler(sqlalchemy.exc.OperationalError)(_database_failed)
    app.errorhandler(sqlalchemy.exc.TimeoutError)(_database_busy)
    app.errorhandler(sqlalchemy.exc.DBAPIError)(_database_error)
    app.errorhandler(Exception)(_unexpected)
