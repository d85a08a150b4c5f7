"""Traces in tests: the SDK's in-memory exporter for spans made in this process, and an OTLP/HTTP
receiver (an HTTP server in a thread that decodes each export request with opentelemetry-proto) for
spans a process exports as a deployment's would.

One TracerProvider for the whole run (`recording`), as a process has one."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from inventory_ai import tracing


@dataclass
class Span:
    """A span as a test reads it, whichever way it came: ids in hex, attributes as plain values."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    kind: str
    attributes: dict
    links: list[tuple[str, str]] = field(default_factory=list)
    status: str = "UNSET"
    service: str | None = None


class Spans(list):
    def named(self, name: str) -> list[Span]:
        return [s for s in self if s.name == name]

    def one(self, name: str) -> Span:
        found = self.named(name)
        assert len(found) == 1, (name, [s.name for s in self])
        return found[0]

    def starting(self, prefix: str) -> list[Span]:
        return [s for s in self if s.name.startswith(prefix)]

    def of_trace(self, trace_id: str) -> Spans:
        return Spans(s for s in self if s.trace_id == trace_id)

    def children(self, parent: Span) -> list[Span]:
        return [s for s in self if s.parent_id == parent.span_id]

    def ancestors(self, span: Span) -> list[Span]:
        by_id = {s.span_id: s for s in self}
        found = []
        while span.parent_id in by_id:
            span = by_id[span.parent_id]
            found.append(span)
        return found

    def text(self) -> str:
        """Every name and attribute value: what a test searches for content that must not be there."""
        return "\n".join([s.name for s in self] + [repr(v) for s in self for v in s.attributes.values()])


# --- spans made in this process -----------------------------------------------------------------

_EXPORTER = InMemorySpanExporter()
_PROVIDER: TracerProvider | None = None


def _provider() -> TracerProvider:
    global _PROVIDER
    if _PROVIDER is None:
        _PROVIDER = TracerProvider(sampler=tracing.in_stories(ALWAYS_ON))
        _PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    return _PROVIDER


class Recorded:
    def spans(self) -> Spans:
        return Spans(_from_sdk(s) for s in _EXPORTER.get_finished_spans())

    def clear(self) -> None:
        _EXPORTER.clear()


@contextmanager
def recording() -> Iterator[Recorded]:
    """Tracing on in this process for the block: apps made inside it are traced, spans kept here."""
    provider = _provider()
    _EXPORTER.clear()
    tracing.start(provider)
    try:
        yield Recorded()
    finally:
        tracing.stop(shutdown=False)
        _EXPORTER.clear()


def _from_sdk(span) -> Span:
    context = span.get_span_context()
    return Span(
        name=span.name,
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_id=format(span.parent.span_id, "016x") if span.parent is not None else None,
        kind=span.kind.name,
        attributes=dict(span.attributes or {}),
        links=[
            (format(link.context.trace_id, "032x"), format(link.context.span_id, "016x"))
            for link in span.links
        ],
        status=span.status.status_code.name,
        service=span.resource.attributes.get("service.name"),
    )


# --- spans another process exports over OTLP/HTTP -------------------------------------------------


class OtlpReceiver:
    """`POST /v1/traces` with an OTLP protobuf body (gzip or deflate if sent so), as a collector
    takes it; every span decoded and kept. `with OtlpReceiver() as receiver: receiver.endpoint`."""

    def __init__(self):
        self.spans = Spans()
        self.requests = 0
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver.take(ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> OtlpReceiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def take(self, export: ExportTraceServiceRequest) -> None:
        spans = [
            _from_proto(span, _service(resource_spans.resource))
            for resource_spans in export.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]
        with self.arrived:
            self.requests += 1
            self.spans.extend(spans)
            self.arrived.notify_all()

    def wait_for(self, done, timeout: float = 30.0) -> Spans:
        """The spans once `done(spans)` holds (they come in batches, a schedule delay apart)."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: done(self.spans), timeout), [s.name for s in self.spans]
            return Spans(self.spans)


def _service(resource) -> str | None:
    return next((_value(a.value) for a in resource.attributes if a.key == "service.name"), None)


def _from_proto(span, service: str | None) -> Span:
    return Span(
        name=span.name,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex() or None,
        kind=type(span).SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
        attributes={a.key: _value(a.value) for a in span.attributes},
        links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
        status=type(span.status).StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
        service=service,
    )


def _value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None
