"""OpenTelemetry traces in the GenAI semantic conventions: every answer a trace from its HTTP request
to the ledger row, and every decision a span linked to the answer it decides.

Switched on and configured only by OpenTelemetry's own variables, read by the SDK itself: an OTLP
endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or
`OTEL_TRACES_EXPORTER` (`otlp`, `console`) turns it on; `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
chooses `http/protobuf` (the default) or `grpc`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`, … as the SDK documents
them; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keeps it off. Off, nothing here does
more than test a flag: the loop's calls below return at once (docs/benchmarks.md measures it).

The spans of an answer (invoke_agent, chat, execute_tool, decision) are made in answer_spans.py
(docs/operations.md, "Traces", names the version of the conventions followed). Flask, SQLAlchemy,
requests (the DashScope SDK's HTTP) and Redis come from the official instrumentation packages, and an
MCP request's `tools/call {name}` span from the MCP SDK itself (through the global provider set
here), around those spans. Prompts, replies, arguments and results are recorded only with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, scrubbed as log lines are.
"""

from __future__ import annotations

import os
import threading

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from inventory_ai.logging import get_logger

log = get_logger(__name__)

# On: spans are made and exported. Read by every call below before it does anything else.
ENABLED = False
# On: spans carry prompts, replies, tool arguments and results (sanitised).
CAPTURE_CONTENT = False
CONTENT_SWITCH = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# Requests that are no story of their own: probes and scrapes.
EXCLUDED_URLS = "healthz,readyz,metrics"
DEFAULT_SERVICE_NAME = "inventory_ai"

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


def tracer() -> trace.Tracer:
    """This process's tracer while tracing is on (answer_spans.py makes the answer's spans with it)."""
    return _tracer


def trace_id() -> str | None:
    return ids()[0]
