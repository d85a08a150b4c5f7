"""Redis stopped under logins and chats: requests are served, the limits and the model's breaker fall
back to the process (a warning, `inventory_ai_redis_up 0`, `/readyz` degraded); Redis back, they
are shared again. A real redis-server of the test's own, on a free port, stopped mid-run."""

from __future__ import annotations

import shutil
import subprocess
import time

import pybreaker
import pytest
import redis
from structlog.testing import capture_logs

from inventory_ai.assistant.providers.breaker import FAIL_MAX, shared_breaker
from inventory_ai.assistant.providers.dashscope import ModelCallFailed
from inventory_ai.config import config_for_tests
from inventory_ai.redis_fallback import HEALTH, RedisOrMemory
from tests.support.clients import AuthActions
from tests.support.databases import PASSWORD
from tests.support.serving import free_port

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs redis-server (make hosts-tools)"
)


class RedisServer:
    def __init__(self, tmp_path):
        self.port, self.dir, self.process = free_port(), tmp_path, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def keys(self) -> list[bytes]:
        return redis.Redis.from_url(self.url).keys("*")


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    HEALTH.reset()
    yield server
    server.stop()
    HEALTH.reset()


def readiness(client) -> dict:
    return client.get("/readyz").json


def redis_up_gauge(client) -> str:
    return next(
        line for line in client.get("/metrics").text.splitlines() if line.startswith("inventory_ai_redis_up")
    )


def ask(client) -> int:
    return client.post("/api/v1/chat", json={"message": "面粉还有多少"}).status_code


def test_logins_and_chats_are_served_while_redis_is_down_and_shared_again_when_it_is_back(
    app_with, redis_server
):
    config = config_for_tests("")
    config.redis_url = redis_server.url
    app = app_with(config)
    with app.app_context():
        staff = app.test_client()
        assert AuthActions(staff).login("staff").status_code == 200 and ask(staff) == 200
        assert readiness(staff) == {"status": "ok", "database": "ok", "redis": "ok"}
        assert redis_server.keys()  # the chat's count is in Redis

        redis_server.stop()
        other = app.test_client()
        with capture_logs() as logs:
            assert AuthActions(other).login("manager").status_code == 200  # was 500 ConnectionError
        assert ask(staff) == 200 and ask(other) == 200
        assert readiness(staff) == {"status": "degraded", "database": "ok", "redis": "down"}
        assert redis_up_gauge(staff).endswith(" 0.0")
        assert [e["log_level"] for e in logs if e["event"] == "redis_down"] == ["warning"]
        # The limits still hold, counted in this process meanwhile.
        guesses = [AuthActions(app.test_client()).login("purchaser", "wrong").status_code for _ in range(6)]
        assert guesses == [401] * 5 + [429]

        redis_server.start()  # empty: nothing of the process's counts comes back with it
        assert readiness(staff) == {"status": "ok", "database": "ok", "redis": "ok"}
        assert redis_up_gauge(staff).endswith(" 1.0")
        assert AuthActions(app.test_client()).login("purchaser", PASSWORD).status_code == 200
        assert ask(staff) == 200
        assert redis_server.keys()  # counted in Redis again


def test_the_model_breaker_falls_back_to_the_process_while_redis_is_down(redis_server):
    breaker = shared_breaker(redis_server.url, "qwen-test")
    assert breaker.state == pybreaker.STATE_CLOSED and not breaker.before_call()
    redis_server.stop()
    failure = ModelCallFailed("DashScope 503", "ServiceUnavailable", 503, True)
    for _ in range(FAIL_MAX):
        assert not breaker.before_call()
        breaker.record(failure, trial=False)
    assert breaker.state == pybreaker.STATE_OPEN  # this process's breaker opened, no exception
    redis_server.start()
    HEALTH.reset()  # Redis is tried again at once (in service: within a second)
    assert breaker.state == pybreaker.STATE_CLOSED  # the shared breaker again: Redis had no failures


def test_a_limits_check_is_one_round_trip_that_counts_and_says_when_its_window_ends(
    redis_server, monkeypatch
):
    storage = RedisOrMemory(f"fallback+{redis_server.url}")
    client = storage.shared.get_connection()
    sent = []
    send = client.execute_command
    monkeypatch.setattr(
        client, "execute_command", lambda *args, **kw: sent.append(args[0]) or send(*args, **kw)
    )
    started = time.time()
    assert storage.count_and_expiry("chat", 60)[0] == 1  # the first call also loads the script
    sent.clear()
    count, ends = storage.count_and_expiry("chat", 60)
    assert sent == ["EVALSHA"] and count == 2 and started + 59 <= ends <= time.time() + 60
    # The same counter and window limits' own storage reads (Flask-Limiter's decorator kept it so).
    assert storage.shared.get("chat") == 2 and abs(storage.shared.get_expiry("chat") - ends) <= 1.5

    redis_server.stop()  # down: the process counts on its own, from 0
    count, ends = storage.count_and_expiry("chat", 60)
    assert count == 1 and started + 59 <= ends <= time.time() + 60
