"""Failed logins are counted where an attacker cannot dodge the count: across the page and the API, across
usernames for one password, by the real peer unless it is our own proxy, across processes through Redis,
and before guesses sent at once are evaluated; a wrong current password in a password change counts too.
Successful logins, and a shift logging in at once, are not held up."""

from __future__ import annotations

import re
import threading
import uuid

import pytest

import inventory_ai.api.auth as api_auth
import inventory_ai.extensions as extensions
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.logging import configure_logging
from tests.support.databases import PASSWORD


def api_login(client, username="staff", password="wrong", **kw):
    return client.post("/api/v1/auth/login", json={"username": username, "password": password}, **kw)


def page_login(client, username="staff", password="wrong"):
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    return client.post("/login", data={"username": username, "password": password, "csrf_token": token})


def test_the_page_and_the_api_count_failed_logins_together(client):
    for _ in range(3):
        assert page_login(client).status_code == 401
    for _ in range(2):
        assert api_login(client).status_code == 401
    assert api_login(client).status_code == 429
    assert page_login(client).status_code == 429


def test_one_password_tried_across_many_usernames_is_stopped(client):
    statuses = [api_login(client, username=f"user{i}", password="Winter2026!").status_code for i in range(12)]
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]
    assert api_login(client, username="user99", password="another").status_code == 401  # others go on


def test_forwarded_addresses_count_only_from_our_own_proxy(app_with):
    config = config_for_tests("")
    config.env = "production"
    try:
        app = app_with(config)
        direct = app.test_client()
        for i in range(5):  # a client on the internet pretending to be five machines
            headers = {"X-Forwarded-For": f"198.51.100.{i}", "X-Forwarded-Proto": "https"}
            r = api_login(
                direct, headers=headers, environ_base={"REMOTE_ADDR": "203.0.113.9"}, base_url="https://x"
            )
            assert r.status_code == 401
        blocked = api_login(
            direct, headers={"X-Forwarded-For": "198.51.100.99"}, environ_base={"REMOTE_ADDR": "203.0.113.9"},
            base_url="https://x",
        )  # fmt: skip
        assert blocked.status_code == 429
        proxied = app.test_client()  # through our proxy (127.0.0.1): the address it forwards counts
        for i in range(6):
            headers = {"X-Forwarded-For": f"198.51.100.{i}", "X-Forwarded-Proto": "https"}
            r = api_login(proxied, password=f"guess{i}", headers=headers)
            assert r.status_code == 401
    finally:
        configure_logging(production=False)


def test_repeated_failed_logins_are_throttled_with_retry_after(client):
    for _ in range(5):
        assert (
            client.post(
                "/api/v1/auth/login", json={"username": "staff", "password": "wrong-guess"}
            ).status_code
            == 401
        )
    blocked = client.post("/api/v1/auth/login", json={"username": "staff", "password": "demo-password"})
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    assert blocked.json["error"]["code"] == "too_many_requests"
    # Another user from the same address is not locked out by staff's typos.
    assert (
        client.post(
            "/api/v1/auth/login", json={"username": "manager", "password": "demo-password"}
        ).status_code
        == 200
    )


def test_the_web_login_form_is_throttled_too(client):
    page = client.get("/login").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    for _ in range(5):
        client.post("/login", data={"username": "staff", "password": "nope-nope", "csrf_token": token})
    blocked = client.post("/login", data={"username": "staff", "password": "nope-nope", "csrf_token": token})
    assert blocked.status_code == 429 and "Retry-After" in blocked.headers


WAIT = 30  # seconds: a bound for liveness only; nothing here measures time


def _guesses_at_once(
    app, monkeypatch, username: str, n: int, environ: dict | None = None
) -> tuple[int, dict]:
    """`n` wrong passwords for one user, all in flight together: each one that reaches the password
    check waits there until every other has either reached it too or been refused. Returns how many
    were evaluated, and the statuses."""
    evaluated, statuses, lock = [0], {}, threading.Lock()
    release = threading.Event()

    def slow_check(_username, _password):
        db.session.commit()  # as the real check does: no write lock held while a password is checked
        with lock:
            evaluated[0] += 1
        release.wait(WAIT)
        return None  # a wrong password

    monkeypatch.setattr(api_auth, "check_credentials", slow_check)
    # Guesses that find no room wait for those being evaluated, which here never end until all
    # are settled: a short wait, so they are refused soon (the outcome is the same, only sooner).
    monkeypatch.setattr(extensions, "ATTEMPT_WAIT_SECONDS", 0.2, raising=False)

    def guess(i: int) -> None:
        response = app.test_client().post(
            "/api/v1/auth/login",
            json={"username": username, "password": f"guess-{i}"},
            environ_base=environ or {},
        )
        with lock:
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()

    def settled() -> bool:
        with lock:
            return evaluated[0] + sum(v for k, v in statuses.items() if k != 401) >= n

    polls = threading.Event()
    for _ in range(WAIT * 100):  # until every guess is evaluated or refused (a bound, not a measure)
        if settled():
            break
        polls.wait(0.01)
    release.set()
    for t in threads:
        t.join(WAIT)
    return evaluated[0], statuses


def test_guesses_sent_at_once_are_counted_before_they_are_evaluated(app, monkeypatch):
    evaluated, statuses = _guesses_at_once(app, monkeypatch, "staff", 12)
    assert evaluated == 5, statuses  # the limit: 5 per minute per address and name
    assert statuses == {401: 5, 429: 7}


@pytest.fixture
def redis_url():
    url = "redis://127.0.0.1:6379/14"
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception:
        pytest.skip("no Redis at 127.0.0.1:6379")
    return url


def test_guesses_sent_at_once_are_counted_before_they_are_evaluated_in_redis(
    app_with, monkeypatch, redis_url
):
    config = config_for_tests("")
    config.redis_url = redis_url
    app = app_with(config)
    # A name and an address of their own, so counters left in Redis by another run do not count here.
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    with app.app_context():
        evaluated, statuses = _guesses_at_once(
            app, monkeypatch, f"nobody-{uuid.uuid4().hex[:8]}", 12, environ={"REMOTE_ADDR": address}
        )
        db.session.remove()
    assert evaluated == 5 and statuses == {401: 5, 429: 7}


def test_a_shift_logging_in_at_once_from_one_address_is_let_in(app):
    """More successful logins at once than the limits allow failures (5 per name, 30 per address):
    each waits for a place while others are evaluated, none is refused."""
    statuses, lock = [], threading.Lock()

    def log_in(i: int) -> None:
        response = app.test_client().post(
            "/api/v1/auth/login",
            json={"username": ("staff", "manager", "purchaser")[i % 3], "password": PASSWORD},
        )
        with lock:
            statuses.append(response.status_code)

    threads = [threading.Thread(target=log_in, args=(i,)) for i in range(36)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert statuses == [200] * 36


def test_successful_logins_are_not_counted(client):
    for _ in range(8):  # more than the 5 failures a minute allowed
        assert (
            client.post("/api/v1/auth/login", json={"username": "staff", "password": PASSWORD}).status_code
            == 200
        )
    for _ in range(5):
        assert (
            client.post("/api/v1/auth/login", json={"username": "staff", "password": "wrong"}).status_code
            == 401
        )
    assert (
        client.post("/api/v1/auth/login", json={"username": "staff", "password": "wrong"}).status_code == 429
    )


def test_wrong_current_passwords_are_throttled(client, auth):
    auth.login("staff")
    change = {"new_password": "attacker-pass-1"}
    codes = [
        client.post("/api/v1/auth/password", json={**change, "current_password": f"guess{i}"}).status_code
        for i in range(8)
    ]
    assert codes == [401] * 5 + [429] * 3
    # Not even the right one gets through now: a thief cannot guess on until it is the right one.
    right = client.post("/api/v1/auth/password", json={**change, "current_password": PASSWORD})
    assert right.status_code == 429 and "Retry-After" in right.headers
    # The same counters as the login's: that user's login from this address is throttled too.
    other = client.application.test_client()
    assert other.post("/api/v1/auth/login", json={"username": "staff", "password": "x"}).status_code == 429


def test_a_right_current_password_is_not_counted(client, auth):
    auth.login("staff")
    for i in range(4):
        assert (
            client.post(
                "/api/v1/auth/password",
                json={"current_password": f"guess{i}", "new_password": "another-pass-1"},
            ).status_code
            == 401
        )
    changed = client.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "another-pass-1"}
    )
    assert changed.status_code == 204
    wrong = client.post("/api/v1/auth/password", json={"current_password": "guess", "new_password": "x" * 9})
    assert wrong.status_code == 401  # the fifth failure: still evaluated, the success was given back


def test_login_limits_are_shared_by_every_process_through_redis(app_with):
    """Two app instances (two workers, in effect) count failed logins in the same Redis."""
    import redis

    client = redis.Redis.from_url("redis://127.0.0.1:6379/14")
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    client.flushdb()
    try:
        config = config_for_tests("")
        config.redis_url = "redis://127.0.0.1:6379/14"
        first = app_with(config)
        second = app_with(config, url=config.database_url)
        wrong = {"username": "staff", "password": "wrong-guess"}
        for _ in range(5):
            first.test_client().post("/api/v1/auth/login", json=wrong)
        assert second.test_client().post("/api/v1/auth/login", json=wrong).status_code == 429
        # The count lives in Redis (the limiter object is shared in this process, so the 429 alone
        # would not prove that another process sees it).
        assert any(b"staff" in key for key in client.keys("*"))
    finally:
        client.flushdb()
