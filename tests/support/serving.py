"""Starting a real server in a test or a benchmark: a free port, waiting until it answers, and
gunicorn as `make serve` runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parent.parent.parent
GUNICORN = Path(sys.executable).parent / "gunicorn"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(base: str, server: subprocess.Popen, seconds: float = 20) -> bool:
    """True once GET /healthz answers; False if the process exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if requests.get(f"{base}/healthz", timeout=1).ok:
                return True
        except requests.RequestException:  # not listening yet
            time.sleep(0.1)
    return False


def serve_gunicorn(database_url: str, tmp_path: Path, workers: int = 2, **extra_env):
    """gunicorn with gunicorn.conf.py in production mode on a free port, against `database_url`:
    yields (base URL, process) and kills it afterwards. Requests say `X-Forwarded-Proto: https`
    (from 127.0.0.1, the trusted proxy) or get redirected to https."""
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
        "INVENTORY_AI_WORKERS": str(workers),
        "INVENTORY_AI_THREADS": "4",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "PYTHONPATH": str(REPO),
        **extra_env,
    }
    (tmp_path / "metrics").mkdir()
    # The server's log goes to a file: a pipe nobody reads while it runs would fill and stall it.
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [GUNICORN, "-c", str(REPO / "gunicorn.conf.py"), "--chdir", str(REPO), "wsgi:app"],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=log, text=True,
    )  # fmt: skip
    server.log_path = tmp_path / "gunicorn.log"
    server.instance_path = (
        REPO / "instance"
    )  # its instance folder (--chdir): the change markers, change_markers.py
    base = f"http://127.0.0.1:{port}"
    try:
        assert wait_until_healthy(base, server, seconds=60), "gunicorn did not start"
        yield base, server
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)
        log.close()
