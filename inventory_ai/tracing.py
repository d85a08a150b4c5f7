"""OpenTelemetry traces in the GenAI semantic conventions: every answer a trace from its HTTP request
to the ledger row, and every decision a span linked to the answer it decides.

Switched on and configured only by OpenTelemetry's own variables, read by the SDK itself: an OTLP
endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or
`OTEL_TRACES_EXPORTER` (`otlp`, `console`) turns it on; `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
chooses `http/protobuf` (the default) or `grpc`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`, … as the SDK documents
them; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keeps it off. Off, nothing here does
more than test a flag: the loop's calls below return at once (docs/benchmarks.md measures it).

The spans (docs/operations.md, "Traces", names the version of the conventions followed):
  invoke_agent            one answer's run (`agent`), and its continuation after a decision
  chat {model}            one model call (`model_call`): provider, models, tokens, finish reasons
  execute_tool {name}     one tool call (`tool_call`, `tool_settled`): name, call id, outcome
  decision {kind}         an approval, rejection, edit or sign-off (`decision`), linked to the
                          spans of the answer it decides
Flask, SQLAlchemy, requests (the DashScope SDK's HTTP) and Redis come from the official
instrumentation packages, and an MCP request's `tools/call {name}` span from the MCP SDK itself
(through the global provider set here), around these spans. Prompts, replies, arguments and results are recorded
only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, scrubbed as log lines are.

A span is made current only around synchronous work, never across a `yield` of the loop's event
generators: a generator the client abandons (a closed page) cannot leave a context attached to a
thread that serves the next request.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from inventory_ai.logging import get_logger, scrub

log = get_logger(__name__)

# On: spans are made and exported. Read by every call below before it does anything else.
ENABLED = False
# On: spans carry prompts, replies, tool arguments and results (sanitised).
CAPTURE_CONTENT = False
CONTENT_SWITCH = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# A text part of captured content is cut here: a history of 16,000 tokens is not one attribute.
MAX_CONTENT_CHARS = 4000
# Requests that are no story of their own: probes and scrapes.
EXCLUDED_URLS = "healthz,readyz,metrics"
DEFAULT_SERVICE_NAME = "inventory_ai"

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

_tracer: trace.Tracer | None = None
_provider = None
_started_in: int | None = None  # the process that started the provider (gunicorn forks after it)
_instrumented: list = []  # what `stop` undoes
_global_set = False
_lock = threading.Lock()


# --- switching on and off ---------------------------------------------------------------------


def wanted() -> bool:
    """Whether OpenTelemetry's variables ask for traces."""
    env = os.environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(
        exporter or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def start_from_env() -> bool:
    """Start this process's provider from OpenTelemetry's variables, once; True if tracing is on."""
    with _lock:
        if ENABLED and _started_in == os.getpid():
            return True
    if not wanted():
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # The sampler OTEL_TRACES_SAMPLER names, as the SDK reads it, wrapped (in_stories).
    configured = TracerProvider(shutdown_on_exit=False).sampler
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": DEFAULT_SERVICE_NAME}
    provider = TracerProvider(sampler=in_stories(configured), resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(_exporter()))  # OTEL_BSP_* read by the SDK
    start(provider)
    return True


def _exporter():
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()  # endpoint, headers, TLS, timeout, compression from the variables
    if protocol != "http/protobuf":
        log.warning("otel_protocol_unknown", protocol=protocol, using="http/protobuf")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def in_stories(sampler):
    """The configured sampler, except that a client call outside any request or answer (a
    heartbeat's UPDATE, a stale sweep's SELECT, a Redis ping) starts no trace of its own: alone it
    tells nobody anything, and there would be one every few seconds per worker."""
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    class InStories(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None,
                          trace_state=None):  # fmt: skip
            if (
                kind == SpanKind.CLIENT
                and not trace.get_current_span(parent_context).get_span_context().is_valid
            ):
                return SamplingResult(Decision.DROP)
            return sampler.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

        def get_description(self) -> str:
            return f"InStories{{{sampler.get_description()}}}"

    return InStories()


class _Switched(trace.Tracer):
    """A tracer of whichever provider this process traces into now (a no-op one while off)."""

    def __init__(self, *key):
        self.key = key
        self.of, self.tracer = None, trace.NoOpTracer()

    def current(self) -> trace.Tracer:
        provider = _provider
        if provider is not self.of:
            self.of = provider
            self.tracer = provider.get_tracer(*self.key) if provider is not None else trace.NoOpTracer()
        return self.tracer

    def start_span(self, *args, **kwargs):
        return self.current().start_span(*args, **kwargs)

    def start_as_current_span(self, *args, **kwargs):
        return self.current().start_as_current_span(*args, **kwargs)


class _Switch(trace.TracerProvider):
    """The provider the instrumentation packages and OpenTelemetry's global slot are given, once
    per process: it hands over to the provider `start` set last. So a gunicorn worker's provider
    (`after_fork`) and a test's replace the one before without anything instrumented again."""

    def get_tracer(self, instrumenting_module_name, instrumenting_library_version=None, schema_url=None,
                   attributes=None):  # fmt: skip
        return _Switched(instrumenting_module_name, instrumenting_library_version, schema_url, attributes)


SWITCH = _Switch()


def start(provider) -> None:
    """Trace into `provider` from now on (tests give one with an in-memory exporter)."""
    global ENABLED, CAPTURE_CONTENT, _tracer, _provider, _started_in, _global_set
    from opentelemetry.instrumentation.propagators import (
        TraceResponsePropagator,
        set_global_response_propagator,
    )
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    with _lock:
        _provider, _started_in = provider, os.getpid()
        _tracer = provider.get_tracer("inventory_ai")
        CAPTURE_CONTENT = os.environ.get(CONTENT_SWITCH, "").strip().lower() in (
            "true",
            "span_only",
            "span_and_event",
        )
        if not _global_set:  # the MCP SDK (and any library) traces through the global provider
            trace.set_tracer_provider(SWITCH)
            _global_set = True
        if not _instrumented:
            for instrumentor in (RequestsInstrumentor(), RedisInstrumentor()):
                instrumentor.instrument(tracer_provider=SWITCH)
                _instrumented.append(instrumentor)
        # A response says which trace it was (the `traceresponse` header): a client finds it.
        set_global_response_propagator(TraceResponsePropagator())
        ENABLED = True


def stop(shutdown: bool = True) -> None:
    """Trace no more in this process (tests); with `shutdown` the provider flushes and ends."""
    global ENABLED, _tracer, _provider, _started_in
    from opentelemetry.instrumentation.propagators import set_global_response_propagator

    with _lock:
        ENABLED = False
        while _instrumented:
            _instrumented.pop().uninstrument()
        set_global_response_propagator(None)
        provider, _provider, _tracer, _started_in = _provider, None, None, None
    if provider is not None and shutdown:
        provider.shutdown()


def after_fork() -> None:
    """In a gunicorn worker, before it loads the app (gunicorn.conf.py `post_fork`): the worker's
    own provider, export thread and connection to the collector. One started before the fork (an
    app preloaded in the master) stays the master's; what was instrumented follows the new one."""
    global ENABLED, _provider
    if _started_in is not None and _started_in != os.getpid():
        with _lock:
            ENABLED, _provider = False, None
    start_from_env()


def init_app(app) -> None:
    """The app's requests and its database engine, traced when tracing is on."""
    if not (ENABLED or start_from_env()):
        return
    from opentelemetry.instrumentation.flask import FlaskInstrumentor
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.metrics import get_meter

    from inventory_ai.extensions import db

    FlaskInstrumentor.instrument_app(
        app,
        tracer_provider=SWITCH,
        excluded_urls=os.environ.get("OTEL_PYTHON_FLASK_EXCLUDED_URLS", EXCLUDED_URLS),
        enable_commenter=False,
    )
    with app.app_context():
        # The engine's statements: their text, never their parameters (no SQL comments added).
        EngineTracer(
            SWITCH.get_tracer("opentelemetry.instrumentation.sqlalchemy"),
            db.engine,
            get_meter("inventory_ai").create_up_down_counter(
                "db.client.connections.usage", unit="connections"
            ),
        )


# --- what the rest of the product reads ---------------------------------------------------------


def ids() -> tuple[str | None, str | None]:
    """(trace_id, span_id) of the current span as hex, or (None, None): what an audit event and a
    ledger movement keep, and log lines carry."""
    if not ENABLED:
        return None, None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None, None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def trace_id() -> str | None:
    return ids()[0]


def add_trace_ids(_logger, _name, event_dict: dict) -> dict:
    """structlog processor: `trace_id` and `span_id` on every line written inside a span."""
    if ENABLED:
        trace_hex, span_hex = ids()
        if trace_hex is not None:
            event_dict.setdefault("trace_id", trace_hex)
            event_dict.setdefault("span_id", span_hex)
    return event_dict


def carried(work: Callable) -> Callable:
    """`work` as it runs in another thread (a read in the reader pool): under the spans it was
    handed over in, so its statements join the answer's trace."""
    if not ENABLED:
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
    if not ENABLED:
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
    if not ENABLED:
        return steps
    return _agent(steps, conversation_id, message_id, ending, links)


def _agent(steps, conversation_id, message_id, ending, links):
    span = _tracer.start_span(
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
    if ENABLED:
        span = trace.get_current_span()
        provider, _kind = PROVIDERS.get(provider_name, (provider_name, SpanKind.INTERNAL))
        span.set_attribute("gen_ai.provider.name", provider)
        span.set_attribute("gen_ai.request.model", model)


# --- a model call: chat {model} -------------------------------------------------------------------


def model_call(provider_name: str, model: str, request, steps: Generator) -> Generator:
    """One model call as a `chat {model}` span around its streamed steps; the reply it returns
    gives the usage and finish reason, a ProviderError its `error.type` (the error's code)."""
    if not ENABLED:
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
    if CAPTURE_CONTENT:
        attributes.update(_request_content(request))
    span = _tracer.start_span(f"chat {model}", kind=kind, attributes=attributes)

    def finish(reply):
        span.set_attribute("gen_ai.response.model", model)
        if reply is None:  # the user stopped the answer while the model talked
            span.set_attribute("inventory_ai.cancelled", True)
            return
        span.set_attribute("gen_ai.usage.input_tokens", reply.usage.input_tokens or 0)
        span.set_attribute("gen_ai.usage.output_tokens", reply.usage.output_tokens or 0)
        span.set_attribute("gen_ai.response.finish_reasons", [reply.finish_reason or "stop"])
        if CAPTURE_CONTENT:
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

    def settle(self, outcome) -> None:
        pass


NO_SPAN = _NoSpan()


class _ToolSpan:
    """An `execute_tool {name}` span, current while the tool runs (its statements are its
    children); `settle(outcome)` records what became of the call."""

    def __init__(self, name: str, call_id: str, model_call_id: str | None, arguments):
        self.span = _tracer.start_span(
            f"execute_tool {name}",
            kind=SpanKind.INTERNAL,
            attributes=_tool_attributes(name, call_id, model_call_id, arguments),
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

    def settle(self, outcome) -> None:
        _settle(self.span, outcome)


def tool_call(name: str, call_id: str, model_call_id: str | None = None, arguments=None):
    """`with tracing.tool_call(...) as span: ... span.settle(outcome)`: a tool call being run."""
    if not ENABLED:
        return NO_SPAN
    return _ToolSpan(name, call_id, model_call_id, arguments)


def tool_settled(name: str, call_id: str, outcome, model_call_id: str | None = None, arguments=None) -> None:
    """A call decided without running it: refused (unknown tool, bad arguments), waiting for a
    person, declined by one. Its span is the moment it was decided."""
    if not ENABLED:
        return
    span = _tracer.start_span(
        f"execute_tool {name}",
        kind=SpanKind.INTERNAL,
        attributes=_tool_attributes(name, call_id, model_call_id, arguments),
    )
    _settle(span, outcome)
    span.end()


def _tool_attributes(name, call_id, model_call_id, arguments) -> dict:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,  # the product's id: the API's tool_call_id, the ledger's key
        "gen_ai.tool.type": "function",
    }
    if model_call_id and model_call_id != call_id:
        attributes["inventory_ai.model_call_id"] = model_call_id
    if CAPTURE_CONTENT and arguments is not None:
        attributes["gen_ai.tool.call.arguments"] = _arguments(arguments)
    return attributes


def _settle(span, outcome) -> None:
    status = str(outcome.status)
    span.set_attribute("inventory_ai.tool.outcome", OUTCOMES.get(status, status))
    if status == "error":
        span.set_attribute("error.type", outcome.error_type or "_OTHER")
        span.set_status(Status(StatusCode.ERROR))
    if CAPTURE_CONTENT and outcome.content:
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
    """`with tracing.decision(...)`: a person's decision carried out (`kind`: approve, reject, edit,
    sign_off), linked to the spans of the answer it decides; the bookings it makes are its children."""
    if not ENABLED:
        return NO_SPAN
    span = _tracer.start_span(
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
    if isinstance(arguments, str):
        return _clean(arguments)
    return _clean(_json(arguments))


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
