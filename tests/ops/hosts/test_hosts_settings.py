"""What an admin changes on one host applies on the other within the documented time: tool settings
(registry.SETTINGS_CHECK_SECONDS) and the warehouses a user works in (read with each session
request; for a bearer token within auth.TOKEN_CHECK_SECONDS). Both are 5 s (docs/operations.md,
"Running several hosts")."""

from __future__ import annotations

import json
import time

import pytest

from inventory_ai.assistant.registry import SETTINGS_CHECK_SECONDS
from inventory_ai.auth import TOKEN_CHECK_SECONDS
from tests.support.hosts import chat, tool_names

# A setting read just before the change committed is trusted from the start of that read; a token,
# from the end of its read: the documented time plus a fraction of a second for the read.
SLACK = 0.5


def offered(site, person, host) -> set[str]:
    """The tools the model was offered for `person`'s next message on `host`."""
    mark = len(site.stub.requests)
    answered = chat(person, host, "看看库存")
    assert answered.status_code == 200, answered.text
    [request] = site.stub.requests[mark:]
    return tool_names(request)


def test_a_tool_switched_off_on_one_host_is_no_longer_offered_by_the_other(site, model):
    a, b = site.a, site.b
    staff = site.person(log_in_on=b)
    before = offered(site, staff, b)  # b has read the settings now, and trusts them for a while
    assert {"list_low_stock", "get_stock_movements"} <= before
    try:
        for name, change in (("list_low_stock", {"enabled": False}), ("get_stock_movements", {"allowed_roles": ["admin"]})):  # fmt: skip
            changed = site.admin.request("PATCH", a, f"/api/v1/admin/tools/{name}", json=change)
            assert changed.status_code == 200, changed.text
        changed_at = time.monotonic()
        # On the host that changed them, at once (every worker: the instance folder's change marker).
        assert not {"list_low_stock", "get_stock_movements"} & offered(site, staff, a)
        time.sleep(max(0.0, changed_at + SETTINGS_CHECK_SECONDS + SLACK - time.monotonic()))
        for _ in range(3):  # whichever of b's workers answers
            now = offered(site, staff, b)
            assert not {"list_low_stock", "get_stock_movements"} & now
            assert now == before - {"list_low_stock", "get_stock_movements"}
    finally:
        for name in ("list_low_stock", "get_stock_movements"):
            site.admin.request(
                "PATCH", a, f"/api/v1/admin/tools/{name}", json={"enabled": None, "allowed_roles": None}
            )


def _main_warehouse_in(result: dict) -> bool:
    """Whether a get_material_detail result shows anything of the main warehouse (主仓库): a level or
    a movement there."""
    levels = result.get("warehouses") or {}
    movements = result.get("recent_movements") or []
    return "主仓库" in levels or any(m.get("warehouse") == "主仓库" for m in movements)


def _detail(answered) -> dict:
    assert answered.status_code == 200, answered.text
    [result] = answered.json()["rounds"][0]["results"]
    assert result["name"] == "get_material_detail" and result["status"] == "success", result
    return json.loads(result["content"])


def test_the_warehouses_an_admin_gives_a_user_on_one_host_apply_on_the_other(site, model):
    a, b = site.a, site.b
    staff = site.person(log_in_on=b)
    _, script = site.token_for(staff, b)
    model.answers(model.calls("get_material_detail", {"material": "M001"}))  # M001 is kept in 主仓库 only
    for asker in (staff, script):  # both see it now; b trusts the token's user for a while
        assert _main_warehouse_in(_detail(chat(asker, b, "M001 的库存")))

    changed = site.admin.request("PATCH", a, f"/api/v1/admin/users/{staff.id}", json={"warehouses": ["WH02"]})
    if changed.status_code == 422 and "warehouses" in changed.text:
        pytest.skip("users have no warehouses yet (issue 34): the admin API refuses the field")
    assert changed.status_code == 200, changed.text
    changed_at = time.monotonic()
    # A session's user is read with every request: on b at once.
    me = staff.get(b, "/api/v1/auth/me").json()
    assert me["warehouses"] == ["WH02"], me
    assert not _main_warehouse_in(_detail(chat(staff, b, "M001 的库存")))
    # A bearer token's user, by the time b trusts what it read.
    time.sleep(max(0.0, changed_at + TOKEN_CHECK_SECONDS + SLACK - time.monotonic()))
    for _ in range(3):
        assert script.get(b, "/api/v1/auth/me").json()["warehouses"] == ["WH02"]
        assert not _main_warehouse_in(_detail(chat(script, b, "M001 的库存")))
