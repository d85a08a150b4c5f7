"""Errors: JSON `{"error": {"code", "message", "details"}}` on /api/, HTML pages elsewhere.

No stack trace, path or secret ever leaves through here; unexpected errors are logged with the
request id and the client gets that id to quote.
"""

from __future__ import annotations

import sqlalchemy.exc
from flask import Flask, g, jsonify, request
from werkzeug.exceptions import HTTPException

from inventory_ai.logging import get_logger

log = get_logger(__name__)


class DomainError(Exception):
    """A rule of the warehouse said no. Services raise these; tools and the API translate them."""

    code = "invalid_request"
    http_status = 400

    def __init__(self, message: str, details: dict | None = None):
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


def error_response(status: int, code: str, message: str, details: dict | None = None, headers=None):
    body = {"error": {"code": code, "message": message}}
    if details:
        body["error"]["details"] = details
    response = jsonify(body)
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _wants_json() -> bool:
    return request.path.startswith("/api/")


_NUL_MARKS = (b"\x00", b"\\u0000", b"%00")


def init_errors(app: Flask) -> None:
    @app.teardown_request
    def _end_transaction(_exc):
        """No request leaves a transaction behind, least of all one that failed half-way after taking
        the write lock: work that should persist was committed by the code that did it."""
        from inventory_ai.extensions import db

        db.session.rollback()

    @app.before_request
    def _refuse_nul():
        """NUL is not text: PostgreSQL refuses it in any column, so it is refused here, once, for the
        path, the query string and the body (raw, JSON-escaped or URL-encoded)."""
        raw = request.get_data(cache=True) if request.content_length else b""
        where = request.path.encode() + b"?" + request.query_string.lower() + b" " + raw.lower()
        # A form may already be parsed (the CSRF check reads it), leaving no raw body to look at.
        in_values = any("\x00" in value for values in request.values.listvalues() for value in values)
        if in_values or any(mark in where for mark in _NUL_MARKS):
            message = "text must not contain NUL characters"
            if _wants_json():
                return error_response(400, "invalid_text", message)
            return message, 400
        return None

    @app.errorhandler(DomainError)
    def _domain(exc: DomainError):
        return error_response(exc.http_status, exc.code, exc.message, exc.details)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        if not _wants_json():
            if exc.code == 429:
                from inventory_ai.web.i18n import language, strings

                return strings(language())["too_many"], 429
            return exc
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

    @app.errorhandler(sqlalchemy.exc.TimeoutError)
    def _database_busy(exc: sqlalchemy.exc.TimeoutError):
        # Every pooled connection stayed busy past pool_timeout: overload, not a bug. Say so.
        log.warning("database_pool_exhausted", error_type=type(exc).__name__)
        message = "the server is busy; please retry in a few seconds"
        if _wants_json():
            response = error_response(503, "busy", message)
        else:
            response = app.make_response((message, 503))
        response.headers["Retry-After"] = "5"
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unhandled_error", error_type=type(exc).__name__)
        request_id = g.get("request_id", "")
        message = f"internal error; quote request id {request_id}"
        if _wants_json():
            return error_response(500, "internal_error", message)
        return message, 500
