"""The app as `make serve` runs it: gunicorn with gunicorn.conf.py and two workers."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from pathlib import Path

import pytest
import requests
from sqlalchemy import select

from tests.support.serving import serve_gunicorn as serve


@pytest.fixture
def served(database_url, tmp_path):
    yield from serve(database_url, tmp_path)


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
    assert "Traceback" not in server.log_path.read_text()


def test_an_answer_whose_worker_was_killed_ends_and_frees_its_conversation(app, database_url, tmp_path):
    """SIGKILL the worker while the model is still talking: the answer is left `running` by a
    process that no longer exists. The respawned worker's sweep ends it `failed` (interrupted)
    within INVENTORY_AI_ANSWER_STALE_SECONDS, and the conversation takes the next message."""
    import threading
    import time

    from inventory_ai.auth import issue_token
    from inventory_ai.extensions import db
    from inventory_ai.models import ChatMessage, User
    from tests.support.dashscope_stub import DashScopeStub, Reply

    staff = db.session.query(User).filter_by(username="staff").one()
    _, token = issue_token(staff, "crash")
    db.session.commit()
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}
    with DashScopeStub() as stub:
        stub.then(Reply(content="太慢了", delay=60), Reply(content="在的"))
        server_env = {
            "INVENTORY_AI_LLM_PROVIDER": "dashscope",
            "DASHSCOPE_API_KEY": "sk-crash-test",
            "DASHSCOPE_HTTP_BASE_URL": stub.base_url,
            "INVENTORY_AI_ANSWER_STALE_SECONDS": "5",
        }
        for base, server in serve(database_url, tmp_path, workers=1, **server_env):

            def ask_and_be_cut_off(base=base):
                with contextlib.suppress(requests.RequestException):  # its worker dies under it
                    requests.post(
                        f"{base}/api/v1/chat", json={"message": "你好"}, headers=headers, timeout=90
                    )

            hung = threading.Thread(target=ask_and_be_cut_off, daemon=True)
            hung.start()
            running = None
            for _ in range(100):
                db.session.commit()
                running = db.session.scalar(select(ChatMessage).where(ChatMessage.status == "running"))
                if running is not None:
                    break
                time.sleep(0.1)
            assert running is not None, "the answer never started"
            for _ in range(100):  # kill it while the model is talking, not before it was asked
                if stub.requests:
                    break
                time.sleep(0.1)
            assert stub.requests, "the model was never asked"
            worker = int(Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()[0])
            os.kill(worker, signal.SIGKILL)
            started = time.monotonic()
            ended = None
            while time.monotonic() - started < 60:  # a respawned worker boots slowly on a loaded machine
                db.session.commit()
                ended = db.session.get(ChatMessage, running.id)
                db.session.refresh(ended)
                if ended.status != "running":
                    break
                time.sleep(0.5)
            assert ended.status == "failed" and ended.error_code == "interrupted", ended.status
            again = requests.post(
                f"{base}/api/v1/chat",
                json={"message": "还在吗", "conversation_id": running.conversation_id},
                headers=headers,
                timeout=30,
            )
            assert again.status_code == 200 and again.json()["reply"] == "在的"


def test_each_worker_freezes_what_it_loaded_out_of_the_collectors_sight():
    """gunicorn.conf.py's post_worker_init is a hook gunicorn knows (name and arity checked by its own
    Config) and freezes the objects made so far: full collections then skip the app's ~390,000
    start-up objects (docs/operations.md, "Garbage collection in the workers")."""
    import gc
    import runpy

    from gunicorn.config import Config

    config = Config()
    config.set(
        "post_worker_init",
        runpy.run_path(str(Path(__file__).parents[2] / "gunicorn.conf.py"))["post_worker_init"],
    )
    frozen = gc.get_freeze_count()
    try:
        config.post_worker_init(None)
        assert gc.get_freeze_count() > frozen + 100_000  # the test process's own imports, at least
    finally:
        gc.unfreeze()
