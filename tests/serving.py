"""Starting a real server in a test or a benchmark: a free port, and waiting until it answers."""

from __future__ import annotations

import socket
import subprocess
import time

import requests


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
