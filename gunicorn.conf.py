"""gunicorn for production-like runs: `make serve` or `gunicorn -c gunicorn.conf.py wsgi:app`.

gthread workers: a streamed answer (SSE) holds a thread while the model talks, not a whole process,
and a waiting stream costs no CPU. Sizes come from the environment so operators tune them per host.
"""

import gc
import multiprocessing
import os
import shutil

bind = os.environ.get("INVENTORY_AI_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("INVENTORY_AI_WORKERS", multiprocessing.cpu_count()))
threads = int(os.environ.get("INVENTORY_AI_THREADS", 32))
# A streamed answer can take minutes (5 tool rounds of a slow model); the worker is not stuck.
timeout = int(os.environ.get("INVENTORY_AI_WORKER_TIMEOUT", 300))
# On SIGTERM, requests in flight (a booking being approved, an answer streaming) get this long to finish.
graceful_timeout = int(os.environ.get("INVENTORY_AI_GRACEFUL_TIMEOUT", 60))
keepalive = 5
# What gunicorn itself refuses, before the app: a request line over 8190 bytes (414), a header over
# 8190 bytes or more than 100 headers (431). Answered as JSON (inventory_ai/gunicorn_errors.py).
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100
accesslog = None  # the app writes its own structured access line per request
errorlog = "-"


# Metrics of every worker together (inventory_ai/observability.py): set PROMETHEUS_MULTIPROC_DIR.
def on_starting(server):
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:  # last run's counts would be added to this run's
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)


def post_fork(server, worker):
    # Traces (OTEL_* set): each worker its own OpenTelemetry provider and export thread, started
    # after the fork, before the app loads (inventory_ai/tracing.py).
    from inventory_ai import gunicorn_errors, tracing

    tracing.after_fork()
    gunicorn_errors.install()  # gunicorn's own refusals (414, 431, 400) as JSON, as the API's are


def post_worker_init(worker):
    # INVENTORY_AI_OFFLINE_WARM_UP=1: the offline assistant's intent model fitted and its query
    # shapes' statements built, so that a worker's first answers do not pay for them (about 1 s of
    # CPU at start; inventory_ai/assistant/extension.py). Off by default: a start on a busy machine
    # (the tests' servers) is not held up.
    if os.environ.get("INVENTORY_AI_OFFLINE_WARM_UP") == "1":
        from inventory_ai.assistant.extension import offline_warm_up

        offline_warm_up(worker.wsgi)
    # The app is loaded and warmed: what the worker made so far (the imports, the app, its engines,
    # the intent model: about 390,000 objects) lives as long as it does. Frozen out of the collector's sight, a full
    # collection looks only at what was made since. Before, each one walked them all, holding the
    # worker's GIL for 100-200 ms every few seconds under load (measured in docs/benchmarks.md).
    gc.freeze()


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
