"""Passwords are hashed at the same cost and without a lock: every refusal costs the same hashing (a
deactivated user's too), and no login, password change or admin's reset holds a transaction or the write
lock while it hashes."""

from __future__ import annotations

import sqlite3

import pytest
import werkzeug.security
from sqlalchemy.engine import make_url

import inventory_ai.auth.logins as auth_module
import inventory_ai.models.users as users_module
from inventory_ai.extensions import db
from tests.support.databases import PASSWORD
from tests.support.passwords import APP_HASHING, QUICK_METHOD

# --- every refusal costs the same hashing ----------------------------------------------------


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


def _method(stored: str) -> str:
    return stored.split("$", 1)[0]


def test_the_app_hashes_with_werkzeugs_default_and_its_dummy_hash_costs_the_same(session, user):
    """The suite hashes quickly (tests/support/passwords.py); the app itself hashes every password
    with werkzeug's default method and cost (scrypt), and the dummy hash an unknown name is checked
    against has that method and cost too."""
    assert APP_HASHING["logins"] is werkzeug.security.generate_password_hash
    assert APP_HASHING["users"] is werkzeug.security.generate_password_hash
    default = _method(werkzeug.security.generate_password_hash("a-long-password-1"))
    assert default.startswith("scrypt:") and _method(APP_HASHING["dummy"]) == default
    # and in the suite, a seeded user's hash and the dummy one are alike as well
    assert _method(user("staff").password_hash) == _method(auth_module._DUMMY_HASH) == QUICK_METHOD


# --- no password is hashed holding a lock ----------------------------------------------------


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
