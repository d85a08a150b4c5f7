"""What gunicorn refuses before the app sees it (an over-long request line, an over-long header,
too many headers) is answered JSON `{"error": {"code", "message"}}` like every other /api/ error,
not gunicorn's HTML page. Real gunicorn with gunicorn.conf.py."""

from __future__ import annotations

import pytest
import requests

from tests.support.serving import serve_gunicorn


@pytest.fixture
def served(database_url, tmp_path):
    yield from serve_gunicorn(database_url, tmp_path, workers=1)


def assert_json_error(response, status: int) -> None:
    assert response.status_code == status, response.text[:200]
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] and error["message"] and "x" * 100 not in error["message"]


def test_gunicorns_own_refusals_are_json(served):
    base, server = served
    assert_json_error(requests.get(f"{base}/api/v1/auth/me?q={'x' * 9000}", timeout=10), 414)
    assert_json_error(requests.get(f"{base}/api/v1/auth/me", headers={"X-Big": "x" * 9000}, timeout=10), 431)
    many = {f"X-H{i}": "1" for i in range(120)}
    assert_json_error(requests.get(f"{base}/api/v1/auth/me", headers=many, timeout=10), 431)
    # Within the limits the app answers, JSON as always.
    within = requests.get(
        f"{base}/api/v1/auth/me?q={'x' * 7000}", headers={"X-Forwarded-Proto": "https"}, timeout=10
    )
    assert within.status_code == 401 and within.json()["error"]["code"]
    assert "Traceback" not in server.log_path.read_text()
