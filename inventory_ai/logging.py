"""structlog: JSON lines in production, readable lines in development; a request id on every line."""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid

import structlog
from flask import Flask, g, request

REQUEST_ID_HEADER = "X-Request-ID"
_QUIET_PATHS = {"/healthz", "/readyz"}
_access = structlog.get_logger("inventory_ai.access")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def configure_logging(production: bool, file=None) -> None:
    renderer = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if production
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            # Tracebacks become text first, so the scrubber below sees them too.
            structlog.processors.format_exc_info,
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=file or sys.stderr),
        cache_logger_on_first_use=False,
    )


_SECRET_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(pbkdf2|scrypt|argon2)[^\s\"']{20,}"),
]


def scrub(text: str) -> str:
    """Remove API keys, bearer tokens and password hashes from a string."""
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text


def redact_secrets(_logger, _name, event_dict: dict) -> dict:
    for key, value in list(event_dict.items()):
        if isinstance(value, str):
            event_dict[key] = scrub(value)
    return event_dict


def bind_request_context(app: Flask) -> None:
    @app.before_request
    def _bind() -> None:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        g.request_id = request_id
        g.request_started = time.perf_counter()
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, path=request.path)

    @app.after_request
    def _echo(response):
        request_id = g.get("request_id")
        if request_id:
            response.headers[REQUEST_ID_HEADER] = request_id
        if request.path not in _QUIET_PATHS:
            started = g.get("request_started")
            duration_ms = int((time.perf_counter() - started) * 1000) if started else None
            _access.info(
                "request", method=request.method, status=response.status_code, duration_ms=duration_ms
            )
        return response


def get_logger(name: str = "inventory_ai"):
    return structlog.get_logger(name)
