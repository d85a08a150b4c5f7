"""Prometheus metrics at /metrics: requests, model calls, tool calls, the breaker's state.

With several gunicorn workers set PROMETHEUS_MULTIPROC_DIR to a folder the workers share
(prometheus-client's multiprocess mode; gunicorn.conf.py empties it at start and tells it when a
worker exits): /metrics then adds up every worker, whichever one answers the scrape.
docs/operations.md says what each metric means.
"""

from __future__ import annotations

import os
import time

from flask import Blueprint, Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

# Probes and scrapes come over plain HTTP from inside the network, not through the TLS proxy:
# talisman (production) must answer them, not redirect them to https (/healthz, /readyz, /metrics).
PLAIN_HTTP = {"force_https": False}

REGISTRY = CollectorRegistry(auto_describe=True)
REQUESTS = Counter(
    "inventory_ai_http_requests_total", "HTTP requests", ["method", "endpoint", "status"], registry=REGISTRY
)
REQUEST_SECONDS = Histogram(
    "inventory_ai_http_request_seconds", "HTTP request duration", ["endpoint"], registry=REGISTRY
)
MODEL_CALLS = Counter(
    "inventory_ai_model_calls_total", "Model calls", ["provider", "status"], registry=REGISTRY
)
MODEL_SECONDS = Histogram(
    "inventory_ai_model_call_seconds", "Model call duration", ["provider"], registry=REGISTRY,
    buckets=(0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64),
)  # fmt: skip
TOOL_CALLS = Counter("inventory_ai_tool_calls_total", "Tool calls", ["tool", "status"], registry=REGISTRY)
TOOL_SECONDS = Histogram("inventory_ai_tool_call_seconds", "Tool call duration", ["tool"], registry=REGISTRY)
BREAKER_OPEN = Gauge(
    "inventory_ai_model_breaker_open", "1 while the model circuit breaker is open", registry=REGISTRY,
    multiprocess_mode="livemax",  # open if any live worker last saw it open
)  # fmt: skip
REDIS_UP = Gauge(
    "inventory_ai_redis_up",
    "1 while Redis (INVENTORY_AI_REDIS_URL) answers, 0 while limits and the breaker fall back to the process",
    registry=REGISTRY,
    multiprocess_mode="livemin",  # down if any live worker last found it down
)
MODEL_TOKENS = Counter(
    "inventory_ai_model_tokens_total", "Model tokens used", ["model", "kind"], registry=REGISTRY
)
TOOL_ROUNDS = Counter("inventory_ai_tool_rounds_total", "Rounds of tool calls", registry=REGISTRY)
FLAGGED = Counter(
    "inventory_ai_flagged_messages_total", "Messages flagged by prompt-injection screening", registry=REGISTRY
)

_labelled: dict[tuple, object] = {}


def labelled(metric, *values: str):
    """`metric.labels(*values)`, looked up once per set of values: prometheus_client checks the
    values and takes a lock at each call, most of a metric's cost in the loop (several a message).
    The same child it returns: the values are few (models, providers, tools, statuses)."""
    key = (metric, values)
    child = _labelled.get(key)
    if child is None:
        child = _labelled[key] = metric.labels(*values)
    return child


bp = Blueprint("observability", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


metrics.talisman_view_options = PLAIN_HTTP  # Prometheus scrapes from inside the network too


def init_metrics(app: Flask) -> None:
    app.register_blueprint(bp)

    @app.before_request
    def _start():
        g.metrics_started = time.perf_counter()

    @app.after_request
    def _count(response):
        endpoint = request.endpoint or "unmatched"
        if endpoint != "observability.metrics":
            REQUESTS.labels(request.method, endpoint, str(response.status_code)).inc()
            started = g.get("metrics_started")
            if started is not None:
                REQUEST_SECONDS.labels(endpoint).observe(time.perf_counter() - started)
        return response
