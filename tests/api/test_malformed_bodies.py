"""The request boundary: malformed bodies are a clear 400 (or 422 naming the line), never a 500, logged in
or not, on every kind of endpoint; NUL characters are refused with a clear error, in JSON and in the web
login form."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory_ai.extensions import db
from tests.support.clients import AuthActions

HOSTILE = {
    "lone surrogate": b'{"username": "x\\ud800y", "password": "p"}',
    "100k nested": b"[" * 100_000 + b"]" * 100_000,
    "5000 digits": b'{"message": "hi", "n": ' + b"9" * 5000 + b"}",
    "NaN": b'{"message": NaN}',
    "invalid utf-8": b'{"message": "\xff\xfe"}',
    "escaped NUL": b'{"message": "a\\u0000b"}',
    "truncated": b'{"message": "hi"',
}
ENDPOINTS = [
    ("/api/v1/auth/login", None),
    ("/api/v1/chat", "staff"),
    ("/api/v1/auth/tokens", "staff"),
    ("/api/v1/admin/users", "admin"),
    ("/api/v1/admin/materials", "admin"),
    ("/api/v1/admin/stock/movements", "admin"),
    ("/api/v1/chat/messages/x/decision", "staff"),
]


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("path", "who"), ENDPOINTS, ids=[p for p, _ in ENDPOINTS])
def test_a_malformed_body_is_a_400_with_a_clear_message(client, body, path, who):
    if who:
        AuthActions(client).login(who)
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 400, response.get_data(as_text=True)[:200]
    error = response.json["error"]
    assert error["code"] in ("invalid_json", "invalid_text") and error["message"]


def test_a_csv_with_a_bare_carriage_return_is_a_422_naming_the_line(client):
    AuthActions(client).login("admin")
    csv = "code,name_zh,name_en,unit,category\nM900,测试,Test,kg,FL\nM901,坏\r行,Bad,kg,FL\n"
    response = client.post("/api/v1/admin/materials/import", data=csv.encode(), content_type="text/csv")
    assert response.status_code == 422  # the stray \r ends a line, so rows 3 and 4 are incomplete
    assert {row["line"] for row in response.json["error"]["details"]["rows"]} == {3, 4}
    unreadable = "code,name_zh,name_en,unit,category\nM902," + "x" * 200_000 + ",Y,kg,FL\n"
    response = client.post(
        "/api/v1/admin/materials/import", data=unreadable.encode(), content_type="text/csv"
    )
    assert response.status_code == 422 and "line 2" in response.json["error"]["message"]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(body=st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_no_bytes_make_login_or_chat_fail_with_a_5xx(app, body):
    client = app.test_client()
    for path in ("/api/v1/auth/login", "/api/v1/chat"):
        response = client.post(path, data=body, content_type="application/json")
        assert response.status_code < 500, (path, body[:80], response.status_code)


def test_concurrent_writes_on_sqlite_are_never_a_500(app):
    """40 scripts creating tokens at once (each reads who is calling, then writes): on SQLite a
    transaction that read first could not take the write lock later (25 of 40 were 500s)."""
    import threading

    from inventory_ai.auth import issue_token
    from inventory_ai.models import User

    staff = db.session.query(User).filter_by(username="staff").one()
    plains = [issue_token(staff, f"t{i}")[1] for i in range(8)]
    db.session.commit()
    statuses = []
    barrier = threading.Barrier(40)

    def create(i: int):
        client = app.test_client()
        barrier.wait()
        response = client.post(
            "/api/v1/auth/tokens",
            json={"name": f"n{i}"},
            headers={"Authorization": f"Bearer {plains[i % 8]}"},
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(statuses)) == [201], statuses


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("post", "/api/v1/auth/login", {"json": {"username": "\x00", "password": "x"}}),
        (
            "post",
            "/api/v1/auth/login",
            {"data": '{"username": "a\\u0000b", "password": "x"}', "content_type": "application/json"},
        ),
        ("get", "/api/v1/conversations?x=%00", {}),
    ],
)
def test_nul_characters_are_refused_with_a_clear_error(client, method, path, kwargs):
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == 400
    assert "NUL" in response.get_data(as_text=True)


def test_nul_in_the_web_login_form_is_refused(client):
    page = client.get("/login").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    response = client.post("/login", data={"username": "a\x00", "password": "x", "csrf_token": token})
    assert response.status_code == 400 and "NUL" in response.get_data(as_text=True)
