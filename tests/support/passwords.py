"""Passwords hashed quickly in the suite: PBKDF2 of one round instead of werkzeug's default scrypt
(0.1-0.3 s of CPU each). Every login and every user a test makes costs one hash, thousands in a run,
and no test asserts on what a hash costs, only on which hashes are made and when
(tests/api/test_password_hashing.py, which also checks that the app itself uses werkzeug's default).
A gunicorn or `flask` subprocess a test starts hashes at the real cost; it checks the seeded
users' quick hashes as it would any other (the method is written in the hash)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import pytest
from werkzeug.security import generate_password_hash

import inventory_ai.auth.logins as logins
import inventory_ai.models.users as users

QUICK_METHOD = "pbkdf2:sha256:1"
# What the app hashes with when the suite does not step in, kept for the test that checks it.
APP_HASHING = {
    "logins": logins.generate_password_hash,
    "users": users.generate_password_hash,
    "dummy": logins._DUMMY_HASH,
}


@contextmanager
def quick_hashes() -> Iterator[None]:
    quick = partial(generate_password_hash, method=QUICK_METHOD)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logins, "generate_password_hash", quick)
        patch.setattr(users, "generate_password_hash", quick)
        # A name nobody has is checked against a hash of the same method and cost as a user's.
        patch.setattr(logins, "_DUMMY_HASH", quick("not a password: evens out the time of a failed login"))
        yield
