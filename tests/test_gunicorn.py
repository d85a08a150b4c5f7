"""The app as `make serve` runs it: gunicorn with gunicorn.conf.py and two workers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.serving import free_port, wait_until_healthy

REPO = Path(__file__).resolve().parent.parent
GUNICORN = Path(sys.executable).parent / "gunicorn"


@pytest.fixture
def served(database_url, tmp_path):
    if not GUNICORN.exists():
        pytest.skip("gunicorn is not installed in this environment")
    port = free_port()
    env = {
        **os.environ,
        "INVENTORY_AI_DATABASE_URL": database_url,
        "INVENTORY_AI_ENV": "production",
        "INVENTORY_AI_SECRET_KEY": "gunicorn-test-secret-0123456789",
        "INVENTORY_AI_LLM_PROVIDER": "offline",
        "INVENTORY_AI_BIND": f"127.0.0.1:{port}",
        "INVENTORY_AI_WORKERS": "2",
        "INVENTORY_AI_THREADS": "4",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "PYTHONPATH": str(REPO),
    }
    (tmp_path / "metrics").mkdir()
    server = subprocess.Popen(
        [GUNICORN, "-c", str(REPO / "gunicorn.conf.py"), "--chdir", str(REPO), "wsgi:app"],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        assert wait_until_healthy(base, server), "gunicorn did not start"
        yield base, server
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)
        server.stderr.close()


def test_probes_and_scrapes_over_plain_http_and_sigterm_stops_cleanly(served):
    """Production mode behind gunicorn: the probe and Prometheus get answers over plain HTTP (pages
    redirect to https), and SIGTERM ends both workers and the master without an error. (Which
    worker answers a request is up to the kernel, so that /metrics sums the workers is shown by
    bench/model_faults.py, not asserted here.)"""
    base, server = served
    for _ in range(5):
        assert requests.get(f"{base}/healthz", timeout=5).ok
    scrape = requests.get(f"{base}/metrics", timeout=5)
    assert scrape.status_code == 200
    assert re.search(r'^inventory_ai_http_requests_total\{[^}]*endpoint="health\.healthz"', scrape.text, re.M)
    assert requests.get(f"{base}/login", allow_redirects=False, timeout=5).status_code == 302  # https
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) == 0
    assert "Traceback" not in server.stderr.read()
