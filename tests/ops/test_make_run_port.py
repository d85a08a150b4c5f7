"""`make run PORT=5001` serves on that port and says so (5000 when no PORT is given)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest
import requests

from tests.support.serving import REPO, free_port, wait_until_healthy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
    pytest.mark.skipif(not (REPO / ".venv" / ".installed").exists(), reason="needs `make install` first"),
]


def test_make_run_serves_on_the_port_it_is_given_and_says_which(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "INVENTORY_AI_DATABASE_URL": f"sqlite:///{tmp_path / 'run.db'}",
        "INVENTORY_AI_LLM_PROVIDER": "offline",
    }
    env.pop("MAKEFLAGS", None)
    log = (tmp_path / "make-run.log").open("w")
    server = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        assert wait_until_healthy(base, server, seconds=240), (tmp_path / "make-run.log").read_text()[-2000:]
        assert requests.get(f"{base}/login", timeout=5).status_code == 200
        said = (tmp_path / "make-run.log").read_text()
        assert f"serving on http://127.0.0.1:{port}" in said
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # make, flask and its reloader-less server together
        server.wait(timeout=20)
        log.close()


def test_make_run_says_5000_when_no_port_is_given():
    plan = subprocess.run(
        ["make", "--no-print-directory", "-n", "run"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert "--port 5000" in plan and "serving on http://127.0.0.1:5000" in plan
