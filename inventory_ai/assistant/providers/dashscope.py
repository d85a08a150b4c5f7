"""Qwen through the official dashscope SDK (native protocol, streamed).

Facts this relies on (read in the SDK source, dashscope 1.27.x):
- Errors are RETURNED as responses (status_code != 200, output None); only transport errors raise.
- A streamed `event:error` arrives as a response with status 400 and the server's code.
- Streamed tool calls come in fragments joined by `index`; later fragments have "id": "". Not every
  server (nor every proxy) sends a usable `index`: _ToolCallAssembler falls back to the id.
- `finish_reason` may be "stop" while tool_calls are present: tool use = non-empty tool_calls.
- DASHSCOPE_HTTP_BASE_URL is read when the SDK is imported, so the endpoint is passed as
  `base_address` on every call.
- Without `session=` the SDK shares one requests.Session whose pool keeps 10 connections; more
  concurrent calls open and drop a connection (a TLS handshake) each time. `model_http_session`
  (model_http.py) keeps as many as the process has threads.

Faults: the SDK retries nothing on HTTP status, so attempts that fail with 429, 5xx or a
connection error are retried here with exponential backoff and jitter (tenacity), but only before
the first chunk reaches the user. A circuit breaker (breaker.py) stands in front of each model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import requests
from dashscope import Generation
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.providers.breaker import ModelBreaker
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

log = get_logger(__name__)

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


class _ToolCallAssembler:
    """Joins streamed tool-call fragments into calls. A fragment belongs to the call with its
    `index` when that is an integer; else to the call with its `id` when it has one; else it is a
    call of its own, unless it only carries more arguments (no name), which continue the call
    before it. A new id and name at an index already holding another call start a new call: two
    complete calls sent without an index (or both at 0) stay two calls. Whatever arrives, the
    result is calls in the order they began, never an exception."""

    def __init__(self) -> None:
        self._calls: list[dict[str, str]] = []
        self._by_index: dict[int, dict[str, str]] = {}
        self._by_id: dict[str, dict[str, str]] = {}

    def add(self, fragments) -> None:
        for fragment in fragments if isinstance(fragments, list) else ():
            if isinstance(fragment, dict):
                self._add(fragment)

    def _add(self, fragment: dict) -> None:
        index = fragment.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) else ""
        function = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        arguments = function.get("arguments") if isinstance(function.get("arguments"), str) else ""
        current = None
        if index is not None:
            current = self._by_index.get(index)
            if current is not None and call_id and name and current["id"] not in ("", call_id):
                current = None  # another call given the same index: its own call
        elif call_id:
            current = self._by_id.get(call_id)
        elif not name and self._calls:
            current = self._calls[-1]  # more arguments for the call being streamed
        if current is None:
            current = {"id": "", "name": "", "arguments": ""}
            self._calls.append(current)
        if index is not None:
            self._by_index[index] = current
        if call_id:
            current["id"] = call_id
            self._by_id[call_id] = current
        if name:
            current["name"] = name
        current["arguments"] += arguments

    def calls(self) -> tuple[ToolCall, ...]:
        # An id the model left out stays empty: the loop gives every call its own id anyway. A call
        # without a name is kept (the loop refuses it, on the record) unless nothing came for it.
        return tuple(
            ToolCall(c["id"], c["name"], c["arguments"] or "{}")
            for c in self._calls
            if c["name"] or c["arguments"]
        )


class DashScopeProvider:
    name = "dashscope"
    costs_tokens = True

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
        except BaseException:  # abandoned (the user left) or a bug: says nothing of the service
            if trial:
                self.breaker.gate.release()
            raise
        self.breaker.record(None, trial)
        yield ModelReply(
            text="".join(text),
            tool_calls=tool_calls.calls(),
            usage=usage,
            finish_reason=finish_reason,
            reasoning="".join(reasoning),
        )

    def _open(self, request: ModelRequest):
        """Start the call and read its first response, retrying what is worth retrying, within
        what is left of the answer's deadline."""
        stop = stop_after_attempt(self.max_attempts)
        if request.timeout_seconds is not None:
            stop = stop | stop_after_delay(max(0.0, request.timeout_seconds - self.backoff_seconds))
        retrying = Retrying(
            stop=stop,
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
            first = next(responses, None)
        except requests.RequestException as exc:
            error = classify(None, "ConnectionError", type(exc).__name__)
            self.breaker.record(error, trial)
            log.warning("model_attempt_failed", code=error.code)
            raise error from None
        if first is None:  # 200 with an empty body: nothing to read, worth another try
            error = classify(None, "EmptyResponse", "the model answered with an empty body")
            self.breaker.record(error, trial)
            log.warning("model_attempt_failed", code=error.code)
            raise error
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
            "request_timeout": max(1, int(min(self.timeout_seconds, request.timeout_seconds or 1e9))),
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
