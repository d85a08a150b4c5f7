"""Each user's chat limit (INVENTORY_AI_CHAT_RATE_LIMIT): its counters, its headers and its refusals,
for a setting of one limit or of several."""

from __future__ import annotations

import time

import pytest
from limits import parse

from inventory_ai.extensions import limiter
from tests.support.clients import client_for
from tests.support.scripted import ScriptedProvider, answer, use


def ask(client):
    return client.post("/api/v1/chat", json={"message": "hi"})


@pytest.fixture
def storage_calls(app, monkeypatch):
    """The counter operations the limits' storage is asked for, by name (not those it makes of
    itself to answer one)."""
    storage, calls, depth = limiter.limiter.storage, [], [0]
    for name in ("incr", "get", "get_expiry", "count_and_expiry", "clear"):
        method = getattr(storage, name, None)
        if method is not None:

            def counted(*args, _name=name, _method=method, **kwargs):
                if not depth[0]:
                    calls.append(_name)
                depth[0] += 1
                try:
                    return _method(*args, **kwargs)
                finally:
                    depth[0] -= 1

            monkeypatch.setattr(storage, name, counted)
    return calls


@pytest.mark.parametrize("setting, limits", [("5 per minute", 1), ("5 per minute; 50 per day", 2)])
def test_a_message_is_one_counter_operation_per_limit(app, client, auth, storage_calls, setting, limits):
    """Flask-Limiter's decorator incremented, then read the count and its expiry again for the
    headers: three operations (Redis round trips, with Redis) a limit a message."""
    app.config["CHAT_RATE_LIMIT"] = setting
    use(app, ScriptedProvider(*[answer("ok")] * 2))
    auth.login("staff")
    storage_calls.clear()  # the login's own counters
    for _ in range(2):
        assert ask(client).status_code == 200
    assert len(storage_calls) == 2 * limits


def test_the_counter_is_the_one_flask_limiter_kept(app, client, auth, user):
    """Same key and window as before, so hosts of either version count one user's messages together
    while a deployment rolls."""
    app.config["CHAT_RATE_LIMIT"] = "5 per minute"
    use(app, ScriptedProvider(*[answer("ok")] * 2))
    auth.login("staff")
    for _ in range(2):
        assert ask(client).status_code == 200
    key = parse("5 per minute").key_for(f"user:{user('staff').id}", "api_chat.Chat")
    assert limiter.limiter.storage.get(key) == 2


def test_headers_count_down_and_the_refusal_says_when_to_come_back(app, client, auth):
    app.config["CHAT_RATE_LIMIT"] = "2 per minute"
    use(app, ScriptedProvider(*[answer("ok")] * 2))
    auth.login("staff")
    started = time.time()
    answered = [ask(client) for _ in range(2)]
    assert [r.headers["X-RateLimit-Remaining"] for r in answered] == ["1", "0"]
    assert all(r.headers["X-RateLimit-Limit"] == "2" for r in answered)
    assert all(started < int(r.headers["X-RateLimit-Reset"]) <= started + 62 for r in answered)
    assert all("Retry-After" not in r.headers for r in answered)
    refused = ask(client)
    assert refused.status_code == 429 and refused.json["error"] == {
        "code": "too_many_requests",
        "message": "2 per 1 minute",
    }
    assert 0 < int(refused.headers["Retry-After"]) <= 61
    assert refused.headers["X-RateLimit-Remaining"] == "0" and refused.headers["X-RateLimit-Limit"] == "2"


def test_of_several_limits_the_one_that_refuses_is_the_one_shown(app, client, auth):
    """Shortest window first while none refuses; the refusing one, with its own wait, when one does."""
    app.config["CHAT_RATE_LIMIT"] = "5 per minute; 2 per hour"
    use(app, ScriptedProvider(*[answer("ok")] * 2))
    auth.login("staff")
    answered = [ask(client) for _ in range(2)]
    assert [(r.headers["X-RateLimit-Limit"], r.headers["X-RateLimit-Remaining"]) for r in answered] == [
        ("5", "4"),
        ("5", "3"),
    ]
    refused = ask(client)
    assert refused.status_code == 429 and refused.headers["X-RateLimit-Limit"] == "2"
    assert 60 < int(refused.headers["Retry-After"]) <= 3601


def test_the_page_and_the_api_count_apart_and_each_user_alone(app, user):
    """As Flask-Limiter scoped a view's limit: per view (the no-JavaScript form's /ask, the API's
    /chat) and per user."""
    app.config["CHAT_RATE_LIMIT"] = "1 per minute"
    use(app, ScriptedProvider(*[answer("ok")] * 3))
    staff, manager = client_for(app, "staff"), client_for(app, "manager")
    assert ask(staff).status_code == 200 and ask(staff).status_code == 429
    assert ask(manager).status_code == 200
    assert staff.post("/ask", data={"message": "hi"}).status_code == 302
    assert staff.post("/ask", data={"message": "hi"}).status_code == 429
    item, caller = parse("1 per minute"), f"user:{user('staff').id}"
    assert [
        limiter.limiter.storage.get(item.key_for(caller, view)) for view in ("api_chat.Chat", "web.ask")
    ] == [2, 2]
