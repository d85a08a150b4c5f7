"""Chunked bodies meet the same guard at the door as any other: a malformed one is a 400 before login
and on every JSON endpoint, one past the size limit a 413 (never a cut body), and a well-formed one
still logs in."""

from __future__ import annotations

import io

import pytest

# --- one guard at the door sees every body, chunked ones included -----------------------------

HOSTILE = {
    "lone surrogate": (b'{"username": "x\\ud800y", "password": "p"}', "invalid_json"),
    "100k nested [": (b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
    "5000-digit number": (b'{"username": ' + b"9" * 5000 + b', "password": "p"}', "invalid_json"),
    "escaped NUL": (b'{"username": "x\\u0000y", "password": "p"}', "invalid_text"),
    "NaN": (b'{"username": NaN, "password": "p"}', "invalid_json"),
}


def chunked(client, path: str, body: bytes, **kwargs):
    """A body sent as a server that speaks chunked transfer hands it on: no Content-Length, and
    the stream ended by the server (gunicorn sets wsgi.input_terminated)."""
    return client.open(
        path,
        method="POST",
        input_stream=io.BytesIO(body),
        headers={
            "Transfer-Encoding": "chunked",
            "Content-Type": "application/json",
            **kwargs.pop("headers", {}),
        },
        environ_overrides={"wsgi.input_terminated": True},
        **kwargs,
    )


@pytest.mark.parametrize("label", list(HOSTILE))
def test_a_chunked_malformed_body_is_a_400_before_login(client, label):
    body, code = HOSTILE[label]
    response = chunked(client, "/api/v1/auth/login", body)
    assert response.status_code == 400, response.get_data(as_text=True)[:200]
    assert response.json["error"]["code"] == code and response.json["error"]["message"]


@pytest.mark.parametrize(
    "path", ["/api/v1/chat", "/api/v1/auth/tokens", "/api/v1/admin/users", "/api/v1/admin/stock/movements"]
)
def test_a_chunked_malformed_body_is_a_400_on_every_json_endpoint(client, auth, path):
    auth.login("admin")
    asked = {"name": "chunked", "scopes": ["read", "chat", "admin"]}  # the admin API's writes need `admin`
    token = client.post("/api/v1/auth/tokens", json=asked).json["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    for label in ("lone surrogate", "100k nested [", "5000-digit number"):
        body, code = HOSTILE[label]
        response = chunked(client, path, body, headers=bearer)
        assert response.status_code == 400, (label, response.get_data(as_text=True)[:200])
        assert response.json["error"]["code"] == code


def test_a_chunked_body_past_the_size_limit_is_a_413_not_a_cut_body(client):
    big = b'{"username": "' + b"a" * (2 * 1024 * 1024) + b'", "password": "p"}'
    response = chunked(client, "/api/v1/auth/login", big)
    assert response.status_code == 413
    assert response.json["error"]["code"] == "request_entity_too_large"


def test_a_well_formed_chunked_body_still_logs_in(client):
    response = chunked(client, "/api/v1/auth/login", b'{"username": "staff", "password": "demo-password"}')
    assert response.status_code == 200 and response.json["username"] == "staff"
