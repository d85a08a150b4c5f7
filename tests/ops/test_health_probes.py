"""Health probes: /healthz always, /readyz only when the database answers."""

from __future__ import annotations

from inventory_ai import create_app
from inventory_ai.config import config_for_tests


def test_healthz_and_readyz(client):
    assert client.get("/healthz").json == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["database"] == "ok"


def test_readyz_is_503_when_the_database_is_unreachable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = create_app(config_for_tests(f"sqlite:///{tmp_path}/missing/dir/db.sqlite"))
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.json == {"status": "unavailable", "database": "unreachable"}
