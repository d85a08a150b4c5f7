"""The spans of an answer in the GenAI semantic conventions (tracing.py switches tracing on and off):

  invoke_agent            one answer's run (`agent`), and its continuation after a decision
  chat {model}            one model call (`model_call`): provider, models, tokens, finish reasons
  execute_tool {name}     one tool call (`tool_call`, `tool_settled`): name, call id, outcome
  decision {kind}         an approval, rejection, edit or sign-off (`decision`), linked to the
                          spans of the answer it decides

Off, every call here tests one flag and returns at once (docs/benchmarks.md measures it). A span is
made current only around synchronous work, never across a `yield` of the loop's event generators: a
generator the client abandons (a closed page) cannot leave a context attached to a thread that serves
the next request. Content (prompts, replies, arguments, results) only with the content switch,
scrubbed as log lines are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from inventory_ai import tracing
from inventory_ai.logging import scrub

# A text part of captured content is cut here: a history of 16,000 tokens is not one attribute.
MAX_CONTENT_CHARS = 4000
# How the providers appear (gen_ai.provider.name) and whether the model is reached over the network.
PROVIDERS = {"dashscope": ("dashscope", SpanKind.CLIENT), "offline": ("offline", SpanKind.INTERNAL)}
# What became of a tool call (inventory_ai.tool.outcome), from the call's stored status.
OUTCOMES = {
    "success": "success",
    "error": "error",
    "declined": "declined",
    "pending_confirmation": "awaiting_approval",
    "awaiting_signoff": "awaiting_signoff",
}


def carried(work: Callable) -> Callable:
    """`work` as it runs in another thread (a read in the reader pool): under the spans it was
    handed over in, so its statements join the answer's trace."""
    if not tracing.ENABLED:
        return work
    handed_over = otel_context.get_current()

    def run(*args, **kwargs):
        token = otel_context.attach(handed_over)
        try:
            return work(*args, **kwargs)
        finally:
            otel_context.detach(token)

    return run


def carried_steps(steps: Iterator) -> Iterator:
    """A streamed response's events, read after its view returned (and after the request's span
    ended): each step runs under the request's context, taken now, so the answer stays in the
    request's trace."""
    if not tracing.ENABLED:
        return steps
    handed_over = otel_context.get_current()
    return _carried_steps(steps, handed_over)


def _carried_steps(steps, handed_over):
    try:
        while True:
            token = otel_context.attach(handed_over)
            try:
                event = next(steps)
            except StopIteration:
                return
            finally:
                otel_context.detach(token)
            yield event
    finally:
        token = otel_context.attach(handed_over)
        try:
            getattr(steps, "close", lambda: None)()
        finally:
            otel_context.detach(token)


# --- an answer: invoke_agent --------------------------------------------------------------------


def agent(steps: Iterator, conversation_id: str, message_id: str, ending: Callable[[], dict],
          links: Iterable[tuple[str, str]] = ()) -> Iterator:  # fmt: skip
    """One answer's run (or its continuation after a decision) as an `invoke_agent` span around the
    loop's event generator. `ending()` says how it ended (`status`, `model`, `error_code`)."""
    if not tracing.ENABLED:
        return steps
    return _agent(steps, conversation_id, message_id, ending, links)


def _agent(steps, conversation_id, message_id, ending, links):
    span = tracing.tracer().start_span(
        "invoke_agent",
        kind=SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": conversation_id,
            "inventory_ai.message_id": message_id,
        },
        links=_links(links),
    )

    def finish(_result):
        end = ending()
        span.set_attribute("inventory_ai.answer.status", end.get("status") or "")
        if end.get("model"):
            span.set_attribute("gen_ai.response.model", end["model"])
        if end.get("status") == "failed":
            span.set_attribute("error.type", end.get("error_code") or "_OTHER")
            span.set_status(Status(StatusCode.ERROR))

    return (yield from _within(span, steps, finish))


def answered_by(provider_name: str, model: str) -> None:
    """On the answer's span: who is asked now (the last one asked wrote the answer or failed)."""
    if tracing.ENABLED:
        span = trace.get_current_span()
        provider, _kind = PROVIDERS.get(provider_name, (provider_name, SpanKind.INTERNAL))
        span.set_attribute("gen_ai.provider.name", provider)
        span.set_attribute("gen_ai.request.model", model)


# --- a model call: chat {model} -------------------------------------------------------------------


def model_call(provider_name: str, model: str, request, steps: Generator) -> Generator:
    """One model call as a `chat {model}` span around its streamed steps; the reply it returns
    gives the usage and finish reason, a ProviderError its `error.type` (the error's code)."""
    if not tracing.ENABLED:
        return steps
    return _model_call(provider_name, model, request, steps)


def _model_call(provider_name, model, request, steps):
    provider, kind = PROVIDERS.get(provider_name, (provider_name, SpanKind.INTERNAL))
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "gen_ai.request.stream": True,
    }
    if tracing.CAPTURE_CONTENT:
        attributes.update(_request_content(request))
    span = tracing.tracer().start_span(f"chat {model}", kind=kind, attributes=attributes)

    def finish(reply):
        span.set_attribute("gen_ai.response.model", model)
        if reply is None:  # the user stopped the answer while the model talked
            span.set_attribute("inventory_ai.cancelled", True)
            return
        span.set_attribute("gen_ai.usage.input_tokens", reply.usage.input_tokens or 0)
        span.set_attribute("gen_ai.usage.output_tokens", reply.usage.output_tokens or 0)
        span.set_attribute("gen_ai.response.finish_reasons", [reply.finish_reason or "stop"])
        if tracing.CAPTURE_CONTENT:
            span.set_attribute("gen_ai.output.messages", _output_content(reply))

    return (yield from _within(span, steps, finish))


def _request_content(request) -> dict:
    system = [m for m in request.messages if m.role == "system"]
    history = [m for m in request.messages if m.role != "system"]
    content = {
        "gen_ai.system_instructions": _json([{"type": "text", "content": _clean(m.content)} for m in system]),
        "gen_ai.input.messages": _json([_message(m) for m in history]),
    }
    if request.tools:
        content["gen_ai.tool.definitions"] = _json(
            [
                {"type": "function", "name": t.name, "description": _clean(t.description)}
                for t in request.tools
            ]
        )
    return content


def _message(message) -> dict:
    parts = []
    if message.role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "result": _clean(message.content)}
        )
    elif message.content:
        parts.append({"type": "text", "content": _clean(message.content)})
    parts += [_tool_call_part(c) for c in message.tool_calls]
    return {"role": message.role, "parts": parts}


def _output_content(reply) -> str:
    parts = [{"type": "text", "content": _clean(reply.text)}] if reply.text else []
    parts += [_tool_call_part(c) for c in reply.tool_calls]
    return _json([{"role": "assistant", "parts": parts, "finish_reason": reply.finish_reason or "stop"}])


def _tool_call_part(call) -> dict:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": _arguments(call.arguments)}


# --- a tool call: execute_tool {name} ------------------------------------------------------------


class _NoSpan:
    """What `tool_call` gives while tracing is off: one shared object that records nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False

    def settle(self, outcome, arguments=None) -> None:
        pass


NO_SPAN = _NoSpan()


class _ToolSpan:
    """An `execute_tool {name}` span, current while the tool runs (its statements are its
    children); `settle(outcome, arguments)` records what became of the call."""

    def __init__(self, name: str, call_id: str, model_call_id: str | None):
        self.span = tracing.tracer().start_span(
            f"execute_tool {name}",
            kind=SpanKind.INTERNAL,
            attributes=_tool_attributes(name, call_id, model_call_id),
        )
        self.token = None

    def __enter__(self):
        self.token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(self, exc_type, exc, _tb):
        otel_context.detach(self.token)
        if exc is not None:
            self.span.record_exception(exc)
            self.span.set_attribute("error.type", type(exc).__name__)
            self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()
        return False

    def settle(self, outcome, arguments=None) -> None:
        _settle(self.span, outcome, arguments)


def tool_call(name: str, call_id: str, model_call_id: str | None = None):
    """`with answer_spans.tool_call(...) as span: ... span.settle(outcome, arguments)`: a tool call
    being run."""
    if not tracing.ENABLED:
        return NO_SPAN
    return _ToolSpan(name, call_id, model_call_id)


def tool_settled(name: str, call_id: str, outcome, model_call_id: str | None = None, arguments=None) -> None:
    """A call decided without running it: refused (unknown tool, bad arguments), waiting for a
    person, declined by one. Its span is the moment it was decided."""
    if not tracing.ENABLED:
        return
    span = tracing.tracer().start_span(
        f"execute_tool {name}",
        kind=SpanKind.INTERNAL,
        attributes=_tool_attributes(name, call_id, model_call_id),
    )
    _settle(span, outcome, arguments)
    span.end()


def _tool_attributes(name, call_id, model_call_id) -> dict:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,  # the product's id: the API's tool_call_id, the ledger's key
        "gen_ai.tool.type": "function",
    }
    if model_call_id and model_call_id != call_id:
        attributes["inventory_ai.model_call_id"] = model_call_id
    return attributes


def _settle(span, outcome, arguments) -> None:
    """What became of a call; with the content switch, what it was asked and what it answered (the
    one place a tool span takes content, whether the call ran or was decided without running)."""
    status = str(outcome.status)
    span.set_attribute("inventory_ai.tool.outcome", OUTCOMES.get(status, status))
    if status == "error":
        span.set_attribute("error.type", outcome.error_type or "_OTHER")
        span.set_status(Status(StatusCode.ERROR))
    if tracing.CAPTURE_CONTENT and arguments is not None:
        span.set_attribute("gen_ai.tool.call.arguments", _arguments(arguments))
    if tracing.CAPTURE_CONTENT and outcome.content:
        span.set_attribute("gen_ai.tool.call.result", _clean(outcome.content))


# --- decisions and MCP requests ------------------------------------------------------------------


class _CurrentSpan:
    """A span current for a block of synchronous work."""

    def __init__(self, span):
        self.span = span

    def __enter__(self):
        self.token = otel_context.attach(trace.set_span_in_context(self.span))
        return self.span

    def __exit__(self, exc_type, exc, _tb):
        otel_context.detach(self.token)
        if exc is not None and not isinstance(exc, GeneratorExit):
            self.span.record_exception(exc)
            self.span.set_attribute("error.type", getattr(exc, "code", None) or type(exc).__name__)
            self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()
        return False


def decision(kind: str, approved: bool, conversation_id: str, message_id: str, call_ids: list[str],
             decided_by: int, links: Iterable[tuple[str, str]] = ()):  # fmt: skip
    """`with answer_spans.decision(...)`: a person's decision carried out (`kind`: approve, reject, edit,
    sign_off), linked to the spans of the answer it decides; the bookings it makes are its children."""
    if not tracing.ENABLED:
        return NO_SPAN
    span = tracing.tracer().start_span(
        f"decision {kind}",
        kind=SpanKind.INTERNAL,
        attributes={
            "inventory_ai.decision": kind,
            "inventory_ai.decision.approved": approved,
            "gen_ai.conversation.id": conversation_id,
            "inventory_ai.message_id": message_id,
            "inventory_ai.tool_call_ids": list(call_ids),
            "inventory_ai.decided_by": decided_by,
        },
        links=_links(links),
    )
    return _CurrentSpan(span)


# --- helpers -------------------------------------------------------------------------------------


def _within(span, steps: Generator, finish: Callable[[Any], None]) -> Generator:
    """Run the generator `steps` a step at a time with `span` current (never across a yield), end
    the span when it ends, and return what it returned."""
    current = trace.set_span_in_context(span)
    try:
        while True:
            token = otel_context.attach(current)
            try:
                event = next(steps)
            except StopIteration as stop:
                result = stop.value
                break
            finally:
                otel_context.detach(token)
            yield event
    except GeneratorExit:  # the reader went away: the steps are closed in the span's context
        token = otel_context.attach(current)
        try:
            steps.close()
        finally:
            otel_context.detach(token)
        span.set_attribute("inventory_ai.closed", True)
        span.end()
        raise
    except BaseException as exc:
        span.record_exception(exc)
        span.set_attribute("error.type", getattr(exc, "code", None) or type(exc).__name__)
        span.set_status(Status(StatusCode.ERROR))
        span.end()
        raise
    try:
        finish(result)
    finally:
        span.end()
    return result


def _links(pairs: Iterable[tuple[str, str]]) -> list[Link]:
    links = []
    for trace_hex, span_hex in pairs:
        try:
            context = SpanContext(
                int(trace_hex, 16),
                int(span_hex, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
        except (TypeError, ValueError):
            continue
        if context.is_valid:
            links.append(Link(context, {"inventory_ai.link": "answer"}))
    return links


def _clean(text) -> str:
    """Content as log lines show it: secrets scrubbed, no more than MAX_CONTENT_CHARS."""
    text = text if isinstance(text, str) else str(text)
    if len(text) > MAX_CONTENT_CHARS:
        text = text[:MAX_CONTENT_CHARS] + "…"
    return scrub(text)


def _arguments(arguments) -> str:
    return _clean(arguments if isinstance(arguments, str) else _json(arguments))


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
