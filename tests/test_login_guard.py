"""Passwords under attack: guesses sent at once are counted before they are evaluated, the password
change is throttled like a login, every refusal costs the same hashing, no hash holds a lock, and
API tokens do not outlive an admin's reset or a deactivation."""

from __future__ import annotations

import sqlite3
import threading
import uuid

import pytest
from sqlalchemy.engine import make_url

import inventory_ai.api.auth as api_auth
import inventory_ai.auth.logins as auth_module
import inventory_ai.extensions as extensions
import inventory_ai.models.users as users_module
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken
from tests.support.databases import PASSWORD

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


# --- 11. the password change is throttled like a login ------------------------------------------


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


# --- 14. every refusal costs the same hashing ----------------------------------------------------


@pytest.fixture
def hashes(monkeypatch):
    """Counts password hash checks, wherever a login makes them (auth, or the User model)."""
    seen = []
    real = auth_module.check_password_hash

    def counting(stored, password):
        seen.append(stored)
        return real(stored, password)

    monkeypatch.setattr(auth_module, "check_password_hash", counting)
    monkeypatch.setattr(users_module, "check_password_hash", counting)
    return seen


def test_a_deactivated_user_costs_the_same_hashing_as_any_refusal(client, user, hashes):
    purchaser = user("purchaser")
    purchaser.active = False
    db.session.commit()
    for username, password in [
        ("purchaser", PASSWORD),  # deactivated, right password
        ("purchaser", "wrong-1"),  # deactivated, wrong password
        ("staff", "wrong-2"),  # active, wrong password
        ("no_such_user", "wrong-3"),  # no such name
    ]:
        before = len(hashes)
        response = client.post(
            "/api/v1/auth/login",
            json={"username": username, "password": password},
            environ_base={"REMOTE_ADDR": f"10.0.0.{len(hashes) + 1}"},
        )
        assert response.status_code == 401
        assert len(hashes) == before + 1, username  # one full check, whoever it is


# --- 18. no password is hashed holding a lock ----------------------------------------------------


def _write_lock_is_free(database_url: str) -> bool:
    """Another writer could start now (SQLite: the one write lock of the whole database)."""
    path = make_url(database_url).database
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


@pytest.fixture
def lock_during_hash(monkeypatch, database_url):
    """For each password hashed or checked in auth: was the request inside a transaction, and
    (SQLite) could another writer have started meanwhile?"""
    observed: list[tuple[bool, bool]] = []
    real_check, real_hash = auth_module.check_password_hash, auth_module.generate_password_hash

    def observe() -> None:
        sqlite = database_url.startswith("sqlite")
        observed.append(
            (db.session().in_transaction(), _write_lock_is_free(database_url) if sqlite else True)
        )

    def check(stored, password):
        observe()
        return real_check(stored, password)

    def make(password, *args, **kwargs):
        observe()
        return real_hash(password, *args, **kwargs)

    monkeypatch.setattr(auth_module, "check_password_hash", check)
    monkeypatch.setattr(auth_module, "generate_password_hash", make)
    return observed


def test_a_login_hashes_without_holding_a_transaction(client, lock_during_hash):
    assert (
        client.post("/api/v1/auth/login", json={"username": "staff", "password": "wrong"}).status_code == 401
    )
    assert (
        client.post("/api/v1/auth/login", json={"username": "nobody", "password": "wrong"}).status_code == 401
    )
    assert (
        client.post("/api/v1/auth/login", json={"username": "staff", "password": PASSWORD}).status_code == 200
    )
    assert lock_during_hash == [(False, True)] * 3


def test_a_password_change_hashes_without_holding_a_transaction(client, auth, lock_during_hash):
    auth.login("staff")
    lock_during_hash.clear()
    changed = client.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "a-new-password-1"}
    )
    assert changed.status_code == 204
    assert lock_during_hash == [(False, True)] * 2  # the check of the current one, the new one's hash
    again = client.application.test_client()
    assert (
        again.post(
            "/api/v1/auth/login", json={"username": "staff", "password": "a-new-password-1"}
        ).status_code
        == 200
    )


def test_an_admin_creating_or_resetting_a_user_hashes_without_the_write_lock(client, auth, lock_during_hash):
    auth.login("admin")
    lock_during_hash.clear()
    made = client.post(
        "/api/v1/admin/users",
        json={"username": "newbie", "password": "a-long-password-1", "role": "purchaser"},
    )
    assert made.status_code == 201
    reset = client.post(
        f"/api/v1/admin/users/{made.json['id']}/password", json={"password": "another-pass-2"}
    )
    assert reset.status_code == 204
    assert [free for _in_transaction, free in lock_during_hash] == [True, True]


# --- 13. API tokens end with an admin's reset or a deactivation ----------------------------------


def _token(app, username: str, password: str = PASSWORD) -> str:
    c = app.test_client()
    login = c.post("/api/v1/auth/login", json={"username": username, "password": password})
    c.environ_base["HTTP_X_CSRFTOKEN"] = login.json["csrf_token"]
    return c.post("/api/v1/auth/tokens", json={"name": "script"}).json["token"]


def _works(app, token: str) -> bool:
    return (
        app.test_client().get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )


def test_an_admin_reset_revokes_the_users_tokens(app, client, auth, user):
    token = _token(app, "staff")
    assert _works(app, token)
    auth.login("admin")
    reset = client.post(
        f"/api/v1/admin/users/{user('staff').id}/password", json={"password": "reset-password-1"}
    )
    assert reset.status_code == 204
    assert not _works(app, token)
    assert (
        db.session.query(ApiToken)
        .filter(ApiToken.revoked_at.is_(None))
        .filter_by(user_id=user("staff").id)
        .count()
        == 0
    )


def test_a_deactivation_revokes_the_users_tokens_for_good(app, client, auth, user):
    token = _token(app, "staff")
    auth.login("admin")
    staff_id = user("staff").id
    assert client.patch(f"/api/v1/admin/users/{staff_id}", json={"active": False}).status_code == 200
    assert not _works(app, token)
    assert client.patch(f"/api/v1/admin/users/{staff_id}", json={"active": True}).status_code == 200
    assert not _works(app, token)  # reactivated: the user is back, the old token is not
    assert _works(app, _token(app, "staff"))  # a new one works


def test_your_own_password_change_keeps_your_tokens(app, client, auth):
    token = _token(app, "staff")
    auth.login("staff")
    changed = client.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "a-new-password-1"}
    )
    assert changed.status_code == 204
    assert _works(app, token)
