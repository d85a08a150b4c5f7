"""structlog: JSON lines in production, readable lines in development; a request id on every line."""

from __future__ import annotations

import logging
import re
import sys
import sysconfig
import time
import traceback
import uuid

import structlog
from flask import Flask, g, request
from opentelemetry import trace

REQUEST_ID_HEADER = "X-Request-ID"
_QUIET_PATHS = {"/healthz", "/readyz"}
# The access line's logger, bound to the configuration at hand by configure_logging: structlog's
# own lazy logger builds its bound logger again for every line (cache_logger_on_first_use is off so
# that a later configuration still applies).
_access = structlog.get_logger("inventory_ai.access")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def add_trace_ids(_logger, _name, event_dict: dict) -> dict:
    """structlog processor: `trace_id` and `span_id` on every line written inside a recording span.
    With traces off there is none (OpenTelemetry's API hands out invalid spans), so nothing is added."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event_dict.setdefault("trace_id", format(context.trace_id, "032x"))
        event_dict.setdefault("span_id", format(context.span_id, "016x"))
    return event_dict


def configure_logging(production: bool, file=None) -> None:
    renderer = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if production
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_trace_ids,  # trace_id and span_id inside a span (tracing.py), when traces are on
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            describe_exception,
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        # One write per record, its newline included: print() wrote the line and its newline in two
        # writes to an unbuffered stderr, and a line another process (gunicorn's master, another
        # worker) wrote between them was stuck to the end of the JSON line.
        logger_factory=structlog.WriteLoggerFactory(file=file or sys.stderr),
        cache_logger_on_first_use=False,
    )
    global _access
    _access = structlog.get_logger("inventory_ai.access").bind()


# Each pattern with the words (lower case) one of which every match of it holds: a text holding
# none of them (most values on a line: ids, paths, levels, times) is not run through the pattern.
_SECRET_PATTERNS = [
    (re.compile(r"sk-[A-Za-z0-9_-]{8,}"), ("sk-",)),
    (re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"), ("bearer",)),
    (re.compile(r"(pbkdf2|scrypt|argon2)[^\s\"']{20,}"), ("pbkdf2", "scrypt", "argon2")),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), ("@",)),  # e-mail addresses
]


def scrub(text: str) -> str:
    """Remove API keys, bearer tokens, password hashes and e-mail addresses from a string."""
    # Looked for in the text as given: "[redacted]" holds none of the words, so a replacement
    # never makes a later pattern match where the given text held none of its words.
    folded = text.lower()
    for pattern, words in _SECRET_PATTERNS:
        for word in words:
            if word in folded:
                text = pattern.sub("[redacted]", text)
                break
    return text


_LIBRARY_DIRS = tuple(
    {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.-]+){2,}")


def describe_exception(_logger, _name, event_dict: dict) -> dict:
    """An exception as the operator needs it and no more: its type, its message without secrets or
    file paths, and where it happened as module:function:line frames inside this package. No raw
    traceback reaches a log line (they carry paths, and arguments people paste)."""
    exc_info = event_dict.pop("exc_info", None)
    if not exc_info:
        return event_dict
    if exc_info is True:
        exc_info = sys.exc_info()
    elif isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    exc_type, exc, tb = exc_info
    if exc_type is None:
        return event_dict
    frames = [
        f"{frame.f_globals.get('__name__', '?')}:{frame.f_code.co_name}:{lineno}"
        for frame, lineno in traceback.walk_tb(tb)
        if not frame.f_code.co_filename.startswith(_LIBRARY_DIRS)  # our code, not the stdlib's or a package's
    ]
    event_dict["error_type"] = exc_type.__name__
    event_dict["error_message"] = _PATH.sub("[path]", scrub(str(exc)))[:500]
    event_dict["error_at"] = frames[-5:]
    return event_dict


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
