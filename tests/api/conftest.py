"""Fixtures of the API tests (the suite's own are in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.support.clients import AuthActions


@pytest.fixture
def admin_client(client):
    """The test's client, logged in as the admin."""
    AuthActions(client).login("admin")
    return client
