"""What every response carries: security headers and a CSP the page passes, CORS only for configured
origins (none by default), and in production a redirect to HTTPS that spares probes and scrapes."""

from __future__ import annotations

from flask import Flask, request
from flask_talisman import Talisman

from inventory_ai.config import config_for_tests
from inventory_ai.logging import configure_logging
from inventory_ai.security_headers import SecurityHeaders


def test_security_headers_and_a_csp_the_page_passes(client, auth):
    page = client.get("/login")
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["X-Frame-Options"] == "DENY" and page.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script>" not in page.get_data(as_text=True)  # no inline script for the CSP to block
    auth.login("staff")
    chat = client.get("/").get_data(as_text=True)
    assert '<script id="ui-strings" type="application/json">' in chat and "<script>" not in chat


def test_cors_only_for_configured_origins(app_with):

    config = config_for_tests("")
    config.cors_origins = ("https://ops.example-bakery.cn",)
    client = app_with(config).test_client()
    preflight = {
        "Origin": "https://ops.example-bakery.cn",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "Authorization, Content-Type",
    }
    allowed = client.options("/api/v1/chat", headers=preflight)
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://ops.example-bakery.cn"
    other = client.options("/api/v1/chat", headers={**preflight, "Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    page = client.get("/login", headers={"Origin": "https://ops.example-bakery.cn"})
    assert "Access-Control-Allow-Origin" not in page.headers  # the pages are same-origin only


def test_production_redirects_to_https_but_answers_probes_and_scrapes(app_with):
    """Behind the TLS proxy pages are https only; the load balancer's probe and Prometheus come
    over plain HTTP inside the network and must get answers, not redirects."""
    config = config_for_tests("")
    config.env = "production"
    try:
        client = app_with(config).test_client()
        page = client.get("/login")
        assert page.status_code == 302 and page.headers["Location"].startswith("https://")
        assert client.get("/login", headers={"X-Forwarded-Proto": "https"}).status_code == 200
        for path in ("/healthz", "/readyz", "/metrics"):
            assert client.get(path).status_code == 200, path
    finally:
        configure_logging(production=False)


def test_no_cors_headers_by_default(client):
    response = client.options(
        "/api/v1/chat",
        headers={"Origin": "https://anywhere.example", "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in response.headers


def test_the_content_security_policy_is_written_as_talisman_writes_it(app):
    policy = {"default-src": "'self'", "img-src": ["'self'", "data:"], "script-src": "'self'"}
    ours, talismans = SecurityHeaders(Flask("ours")), Talisman(Flask("talismans"))
    with app.test_request_context("/login"):
        written = ours._parse_policy(policy)
        assert written == talismans._parse_policy(policy)
        assert written == "default-src 'self'; img-src 'self' data:; script-src 'self'"
        ours.content_security_policy_nonce_in = talismans.content_security_policy_nonce_in = ["script-src"]
        request.csp_nonce = "n0nce"
        assert ours._parse_policy(policy) == talismans._parse_policy(policy)
        assert ours._parse_policy(policy).endswith("script-src 'self' 'nonce-n0nce'")
