"""The app as `make serve` runs it: gunicorn with gunicorn.conf.py and two workers."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
from pathlib import Path

import pytest
import requests
from sqlalchemy import select

from tests.support.serving import connections_by_worker, worker_holding
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


def _keep_alive_connections(base: str, count: int, pause: float = 0.05) -> list:
    """`count` keep-alive connections opened one after another, each having had one answer."""
    import http.client
    import time

    host, port = base.removeprefix("http://").split(":")
    opened = []
    for _ in range(count):
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", "/healthz")
        assert connection.getresponse().read()
        opened.append(connection)
        time.sleep(pause)  # the workers' loops turn between two clients, as they do between real ones
    return opened


def _until_both_workers_answer(base: str, server) -> None:
    """/healthz answers once one worker is up; the other may still be loading the app on a busy
    machine. One connection at a time until each worker has held one."""
    import http.client
    import time

    from tests.support.serving import connections_by_worker

    host, port = base.removeprefix("http://").split(":")
    answered: set[int] = set()
    deadline = time.monotonic() + 60
    while len(answered) < 2 and time.monotonic() < deadline:
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        answered |= {pid for pid, held in connections_by_worker(server.pid, int(port)).items() if held}
        connection.close()
        time.sleep(0.1)
    assert len(answered) == 2, "the second worker never answered"


def test_keep_alive_connections_land_evenly_on_both_workers(served):
    """A kept-alive connection stays with the worker that accepted it. From one shared socket,
    whichever worker wins the race takes it; with inventory_ai/gunicorn_balance.py a worker holds
    back while the other holds fewer, so 16 clients end up 8 and 8 (within one)."""
    from tests.support.serving import connections_by_worker

    base, server = served
    _until_both_workers_answer(base, server)
    opened = _keep_alive_connections(base, 16)
    try:
        held = connections_by_worker(server.pid, int(base.rsplit(":", 1)[1]))
        assert len(held) == 2 and sum(held.values()) == 16, held
        assert max(held.values()) - min(held.values()) <= 2, held
    finally:
        for connection in opened:
            connection.close()


def test_a_stuck_worker_strands_no_connection(served):
    """A worker holding back leaves new connections to a peer only while that peer is live: with
    one worker stopped (SIGSTOP, as a worker stuck with its listener open), every new client is
    still answered, by the other."""
    from tests.support.serving import connections_by_worker

    base, server = served
    port = int(base.rsplit(":", 1)[1])
    _until_both_workers_answer(base, server)
    first = _keep_alive_connections(base, 4)  # both workers accepting, two connections each
    stuck, live = sorted(connections_by_worker(server.pid, port))
    os.kill(stuck, signal.SIGSTOP)
    try:
        later = _keep_alive_connections(base, 8)  # each must be answered: none waits for `stuck`
        assert connections_by_worker(server.pid, port)[live] >= 8
    finally:
        os.kill(stuck, signal.SIGCONT)
    for connection in first + later:
        connection.close()


def _answered_within(port: int, seconds: float, connection=None) -> bool:
    """One GET /healthz, on `connection` or a new one: answered within `seconds`?"""
    connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=seconds)
    try:
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        return True
    except TimeoutError:
        connection.close()
        return False


def test_with_reuse_port_no_new_connection_waits_for_a_worker_holding_back(database_url, tmp_path):
    """With --reuse-port each worker has its own listening socket and the kernel queues a new
    connection on one of them. A worker holding back would leave it there, where no other worker
    can take it, for as long as its kept-alive connections stay in use (a proxy's pool, a
    benchmark); with reuse_port no worker holds back. Clients arrive one after another, each kept
    alive and in use: every one is answered within seconds. (Kept alive for 30 s: a worker holding
    back lets go when one of its own connections expires.)"""
    for base, server in serve(database_url, tmp_path, GUNICORN_CMD_ARGS="--reuse-port --keep-alive 30"):
        port = int(base.rsplit(":", 1)[1])
        _until_both_workers_answer(base, server)
        held, unanswered = [], 0
        for _ in range(16):
            for connection in held:  # the kept-alive connections stay in use
                assert _answered_within(port, 5, connection)
            new = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            if _answered_within(port, 5, new):
                held.append(new)
            else:
                unanswered += 1
        assert unanswered == 0, (unanswered, connections_by_worker(server.pid, port))
        for connection in held:
            connection.close()


def test_a_new_connection_goes_to_a_worker_with_a_free_thread(database_url, tmp_path):
    """One thread per worker. One worker holds three idle kept-alive connections; the other holds
    only a slow request (a long streamed answer), which has its only thread. A new client is
    answered at once by the worker with a free thread, not queued behind the slow answer (/slow
    takes 15 s; counting connections alone sent the new client there)."""
    import time

    for base, server in serve(
        database_url, tmp_path, app="tests.support.slow_wsgi:app", INVENTORY_AI_THREADS="1"
    ):
        port = int(base.rsplit(":", 1)[1])
        _until_both_workers_answer(base, server)
        opened = _keep_alive_connections(base, 6)
        holders = [worker_holding(server.pid, port, c.sock.getsockname()[1]) for c in opened]
        slow_worker = holders[0]  # about to hold nothing but the slow request
        kept = [c for c, holder in zip(opened, holders, strict=True) if holder != slow_worker]
        assert kept, holders
        for connection, holder in zip(opened, holders, strict=True):
            if holder == slow_worker:
                connection.close()
        deadline = time.monotonic() + 30
        while connections_by_worker(server.pid, port)[slow_worker] and time.monotonic() < deadline:
            time.sleep(0.05)  # until the worker has seen its clients leave
        for connection in kept:  # idle, and alive
            assert _answered_within(port, 5, connection)
        slow = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        slow.request("GET", "/slow")  # to the worker holding fewer: slow_worker
        while not connections_by_worker(server.pid, port)[slow_worker] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert connections_by_worker(server.pid, port)[slow_worker] == 1
        for connection in kept:
            assert _answered_within(port, 5, connection)
        assert _answered_within(port, 5), connections_by_worker(server.pid, port)
        for connection in [*kept, slow]:
            connection.close()
