"""Qwen through the official dashscope SDK (native protocol, streamed).

Facts this relies on (read in the SDK source, dashscope 1.27.x):
- Errors are RETURNED as responses (status_code != 200, output None); only transport errors raise.
- A streamed `event:error` arrives as a response with status 400 and the server's code.
- Streamed tool calls come in fragments joined by `index`; later fragments have "id": "".
- `finish_reason` may be "stop" while tool_calls are present: tool use = non-empty tool_calls.
- DASHSCOPE_HTTP_BASE_URL is read when the SDK is imported, so the endpoint is passed as
  `base_address` on every call.
- Without `session=` the SDK shares one requests.Session whose pool keeps 10 connections; more
  concurrent calls open and drop a connection (a TLS handshake) each time. `model_http_session`
  keeps as many as the process has threads.

Faults: the SDK retries nothing on HTTP status, so attempts that fail with 429, 5xx or a
connection error are retried here with exponential backoff and jitter (tenacity), but only before
the first chunk reaches the user. A circuit breaker (pybreaker) opens after 3 consecutive failed
attempts for 30 s, then lets one trial call through. Its state lives in Redis when configured, so
every process sees the same breaker.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pybreaker
import requests
from dashscope import Generation
from requests.adapters import HTTPAdapter
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from inventory_ai.assistant.providers.base import ModelUnavailable, ProviderError
from inventory_ai.assistant.types import (
    ModelReply,
    ModelRequest,
    ProviderChunk,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    Usage,
)
from inventory_ai.logging import get_logger, scrub
from inventory_ai.observability import BREAKER_OPEN

log = get_logger(__name__)

FAIL_MAX = 3
RESET_TIMEOUT = 30
# Client errors: retrying cannot help and they say nothing about the service's health.
NOT_RETRYABLE = {
    "InvalidApiKey",
    "InvalidParameter",
    "DataInspectionFailed",
    "AccessDenied",
    "Arrearage",
    "ModelNotFound",
}


class ModelCallFailed(ProviderError):
    def __init__(self, message: str, code: str, http_status: int | None, retryable: bool):
        super().__init__(message, code=code)
        self.http_status = http_status
        self.retryable = retryable


def classify(status: int | None, code: str | None, message: str | None) -> ModelCallFailed:
    code = code or "Unknown"
    retryable = code not in NOT_RETRYABLE and (
        status is None
        or status == 429
        or status >= 500
        or code.startswith("Throttling")
        or code in ("InternalError", "ServiceUnavailable", "RequestTimeOut")
    )
    text = scrub(str(message or code))[:300]
    return ModelCallFailed(f"DashScope {status or '-'} {code}: {text}", code, status, retryable)


class TrialGate:
    """Lets exactly one trial call through while the breaker is half-open."""

    def __init__(self, redis_client=None, key: str = "inventory_ai:dashscope:trial"):
        self._redis = redis_client
        self._key = key
        self._lock = threading.Lock()

    def acquire(self) -> bool:
        if self._redis is not None:
            return bool(self._redis.set(self._key, "1", nx=True, ex=RESET_TIMEOUT))
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        if self._redis is not None:
            self._redis.delete(self._key)
        elif self._lock.locked():
            self._lock.release()


class ModelBreaker:
    """pybreaker's counting and storage, without holding its lock for a whole streamed call."""

    def __init__(self, breaker: pybreaker.CircuitBreaker, gate: TrialGate):
        self.breaker = breaker
        self.gate = gate

    @property
    def state(self) -> str:
        return self.breaker.current_state

    def retry_after(self) -> int:
        opened_at = self.breaker._state_storage.opened_at  # pybreaker exposes no public getter
        if opened_at is None:
            return RESET_TIMEOUT
        elapsed = (datetime.now(UTC) - opened_at).total_seconds()
        return max(0, math.ceil(self.breaker.reset_timeout - elapsed))

    def before_call(self) -> bool:
        """Raise ModelUnavailable while open; returns True when this call is the half-open trial."""
        state = self.state
        BREAKER_OPEN.set(1 if state == pybreaker.STATE_OPEN else 0)
        if state == pybreaker.STATE_CLOSED:
            return False
        remaining = self.retry_after() if state == pybreaker.STATE_OPEN else 0
        if remaining > 0 or not self.gate.acquire():
            raise ModelUnavailable("the assistant is temporarily unavailable", retry_after=max(remaining, 1))
        return True

    def record(self, error: Exception | None, trial: bool) -> None:
        def outcome():
            if error is not None:
                raise error

        try:
            self.breaker.call(outcome)
        except Exception:  # the outcome is what we record; it was raised to the caller already
            pass
        finally:
            if trial:
                self.gate.release()
            BREAKER_OPEN.set(1 if self.state == pybreaker.STATE_OPEN else 0)


def shared_breaker(redis_url: str | None) -> ModelBreaker:
    if redis_url:
        import redis

        client = redis.Redis.from_url(redis_url)
        storage = pybreaker.CircuitRedisStorage(
            pybreaker.STATE_CLOSED, client, namespace="inventory_ai:dashscope"
        )
        breaker = pybreaker.CircuitBreaker(
            fail_max=FAIL_MAX,
            reset_timeout=RESET_TIMEOUT,
            state_storage=storage,
            throw_new_error_on_trip=False,
        )
        return ModelBreaker(breaker, TrialGate(client))
    breaker = pybreaker.CircuitBreaker(
        fail_max=FAIL_MAX, reset_timeout=RESET_TIMEOUT, throw_new_error_on_trip=False
    )
    return ModelBreaker(breaker, TrialGate())


POOL_CONNECTIONS = 64  # kept open for reuse, per process; at gunicorn's 64 threads no call waits


def model_http_session(pool_size: int = POOL_CONNECTIONS) -> requests.Session:
    """One per process: keep-alive connections to DashScope, reused by every call."""
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool_size)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


class _ToolCallAssembler:
    """Joins streamed tool-call fragments by their index."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, Any]] = {}

    def add(self, fragments: list[dict]) -> None:
        for position, fragment in enumerate(fragments):
            index = fragment.get("index", position)
            current = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if fragment.get("id"):
                current["id"] = fragment["id"]
            function = fragment.get("function") or {}
            if function.get("name"):
                current["name"] = function["name"]
            current["arguments"] += function.get("arguments") or ""

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"] or "{}")
            for i, c in sorted(self._calls.items())
            if c["name"]
        )


class DashScopeProvider:
    name = "dashscope"

    def __init__(
        self,
        api_key: str,
        model: str,
        breaker: ModelBreaker,
        base_url: str | None = None,
        timeout_seconds: float = 60,
        max_attempts: int = 3,
        backoff_seconds: float = 0.5,
        enable_thinking: bool | None = None,
        http: requests.Session | None = None,
    ):
        self._api_key = api_key
        self.http = http
        self.model = model
        self.breaker = breaker
        self.base_url = base_url
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.enable_thinking = enable_thinking

    def __repr__(self) -> str:  # never the key
        return f"<DashScopeProvider model={self.model} base_url={self.base_url}>"

    # --- one streamed call -------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> Iterator[ProviderChunk]:
        first, responses, trial = self._open(request)
        text, reasoning = [], []
        tool_calls = _ToolCallAssembler()
        usage, finish_reason = Usage(), None
        try:
            response = first
            while response is not None:
                if response.status_code != 200:
                    raise classify(
                        response.status_code,
                        getattr(response, "code", None),
                        getattr(response, "message", None),
                    )
                choice = (response.output or {}).get("choices", [{}])[0]
                message = choice.get("message") or {}
                if piece := message.get("reasoning_content"):
                    reasoning.append(piece)
                    yield ReasoningDelta(piece)
                content = message.get("content")
                if isinstance(content, str) and content:
                    text.append(content)
                    yield TextDelta(content)
                if fragments := message.get("tool_calls"):
                    tool_calls.add(fragments)
                if choice.get("finish_reason") not in (None, "null"):
                    finish_reason = choice["finish_reason"]
                if response.usage:
                    usage = Usage(
                        response.usage.get("input_tokens", 0), response.usage.get("output_tokens", 0)
                    )
                response = next(responses, None)
        except ProviderError as exc:
            self.breaker.record(exc, trial)
            raise
        except requests.RequestException as exc:
            error = classify(None, "ConnectionError", type(exc).__name__)
            self.breaker.record(error, trial)
            raise error from None
        self.breaker.record(None, trial)
        yield ModelReply(
            text="".join(text),
            tool_calls=tool_calls.calls(),
            usage=usage,
            finish_reason=finish_reason,
            reasoning="".join(reasoning),
        )

    def _open(self, request: ModelRequest):
        """Start the call and read its first response, retrying what is worth retrying."""
        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=wait_exponential_jitter(
                multiplier=self.backoff_seconds, max=self.backoff_seconds * 8, jitter=self.backoff_seconds
            ),
            retry=retry_if_exception(lambda e: isinstance(e, ModelCallFailed) and e.retryable),
            reraise=True,
        )
        return retrying(self._attempt, request)

    def _attempt(self, request: ModelRequest):
        trial = self.breaker.before_call()
        try:
            responses = Generation.call(**self._arguments(request))
            first = next(responses)
        except requests.RequestException as exc:
            error = classify(None, "ConnectionError", type(exc).__name__)
            self.breaker.record(error, trial)
            log.warning("model_attempt_failed", code=error.code)
            raise error from None
        if first.status_code != 200:
            error = classify(first.status_code, getattr(first, "code", None), getattr(first, "message", None))
            self.breaker.record(error if error.retryable else None, trial)
            log.warning("model_attempt_failed", code=error.code, status=first.status_code)
            raise error
        return first, responses, trial

    def _arguments(self, request: ModelRequest) -> dict:
        arguments: dict[str, Any] = {
            "model": self.model,
            "api_key": self._api_key,
            "messages": [m.to_wire() for m in request.messages],
            "result_format": "message",
            "stream": True,
            "incremental_output": True,
            "request_timeout": max(1, int(self.timeout_seconds)),
        }
        if request.tools:
            arguments.update(
                tools=[t.to_wire() for t in request.tools], tool_choice="auto", parallel_tool_calls=True
            )
        if self.enable_thinking is not None:
            arguments["enable_thinking"] = self.enable_thinking
        if self.base_url:
            arguments["base_address"] = self.base_url
        if self.http is not None:
            arguments["session"] = self.http
        return arguments
