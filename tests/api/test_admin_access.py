"""Who may use the admin API: every admin endpoint refuses every other role (401 without a login, 403 with
one)."""

from __future__ import annotations

import re

import pytest

from inventory_ai.models import ROLES


def admin_endpoints(app) -> list[tuple[str, str]]:
    out = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/admin/"):
            path = re.sub(r"<(?:int:)?[a-z_]+>", lambda m: "1" if "int:" in m.group(0) else "M001", rule.rule)
            out += [(method, path) for method in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out


EXPECTED = {None: {401}, "warehouse_staff": {403}, "warehouse_manager": {403}, "purchaser": {403}}


@pytest.mark.parametrize("role", [None, *ROLES])
def test_authorization_matrix(app, client, token, role):
    endpoints = admin_endpoints(app)
    assert len(endpoints) >= 25
    username = {
        "warehouse_staff": "staff",
        "warehouse_manager": "manager",
        "purchaser": "purchaser",
        "admin": "admin",
    }.get(role)
    headers = token(username) if username else {}
    for method, path in endpoints:
        status = client.open(path, method=method, headers=headers, json={}).status_code
        if role == "admin":
            assert status not in (401, 403, 500), f"{method} {path} -> {status}"
        else:
            assert status in EXPECTED[role], f"{role} {method} {path} -> {status}"
