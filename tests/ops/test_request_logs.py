"""Requests in the logs: each line carries the request's id, an unexpected error is logged with where it
happened and nothing secret, and an unknown path is answered in its caller's kind (JSON or a page)."""

from __future__ import annotations

import io
import json

from inventory_ai import logging
from inventory_ai.logging import configure_logging, scrub


def test_request_id_is_returned_and_on_every_log_line(client):
    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/api/v1/nowhere", headers={"X-Request-ID": "req-abc-123"})
    assert response.headers["X-Request-ID"] == "req-abc-123"
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert lines and all(line["request_id"] == "req-abc-123" for line in lines)
    assert any(line["event"] == "request" and line["status"] == 404 for line in lines)
    generated = client.get("/healthz").headers["X-Request-ID"]
    assert len(generated) == 32
    forged = client.get("/healthz", headers={"X-Request-ID": "<script>alert(1)</script>"}).headers[
        "X-Request-ID"
    ]
    assert "<" not in forged


def test_unknown_api_path_is_json_and_unknown_page_is_html(client):
    api = client.get("/api/v1/nowhere")
    assert api.status_code == 404 and api.json["error"]["code"] == "not_found"
    page = client.get("/nowhere")
    assert page.status_code == 404 and page.mimetype == "text/html"


def test_an_unexpected_error_is_logged_with_where_it_happened_and_nothing_secret(app, client):
    @app.get("/boom")
    def boom():
        raise RuntimeError("upstream refused key sk-abcdefghijklmnopqrstuvwx at /etc/inventory/secret.yml")

    buffer = io.StringIO()
    configure_logging(production=True, file=buffer)
    response = client.get("/boom")
    assert response.status_code == 500 and "sk-" not in response.get_data(as_text=True)
    line = next(json.loads(x) for x in buffer.getvalue().splitlines() if "unhandled_error" in x)
    assert line["error_type"] == "RuntimeError" and "test_request_logs:boom:" in line["error_at"][-1]
    assert line["error_message"] == "upstream refused key [redacted] at [path]"
    assert "Traceback" not in buffer.getvalue() and "sk-abcdefghijkl" not in buffer.getvalue()


def test_scrub_removes_what_each_of_its_patterns_finds_and_leaves_the_rest():
    """scrub skips a pattern when the text lacks every word a match of it holds; what it writes is
    what running every pattern in turn writes."""
    texts = [
        "/api/v1/chat",
        "cf0d4e8bb9aa4ee98df9fd7f711d2405",
        "key sk-abcdefghijklmnop and BEARER abcdefgh.ijk for chef@example.com",
        "Authorization: Bearer iai_0123456789abcdef",
        "bearer sk-abcdefghijkl",
        "hash pbkdf2:sha256:600000$salt$0123456789abcdef0123 and scrypt:32768:8:1$x$0123456789abcdefghij",
        "SK-ABCDEFGHIJKL and PBKDF2:SHA256:600000$SALT$0123456789 stay",
        "a@b and @example and mail x.y+z@ex-ample.co.uk",
        "",
    ]
    for text in texts:
        expected = text
        for pattern, _words in logging._SECRET_PATTERNS:
            expected = pattern.sub("[redacted]", expected)
        assert scrub(text) == expected
    assert scrub(texts[2]) == "key [redacted] and [redacted] for [redacted]"
