"""Failed logins are counted where an attacker cannot dodge the count: across the page and the API,
across usernames for one password, and by the real peer unless it is our own proxy."""

from __future__ import annotations

import re

from inventory_ai.config import config_for_tests
from inventory_ai.logging import configure_logging


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
