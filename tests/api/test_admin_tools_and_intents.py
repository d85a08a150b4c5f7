"""Tools and intents through the admin API: a tool switched off for a role is gone from that role's next
message; the tools list shows each schema and state; intents are created, changed and removed."""

from __future__ import annotations


def test_disable_a_tool_for_staff_and_their_next_message_no_longer_offers_it(client, admin, token):
    staff = token("staff")
    before = client.post("/api/v1/chat", json={"message": "what is running low?"}, headers=staff).json
    assert before["rounds"][0]["tool_calls"][0]["name"] == "list_low_stock"
    changed = client.patch(
        "/api/v1/admin/tools/list_low_stock",
        json={"allowed_roles": ["warehouse_manager", "admin"]},
        headers=admin,
    )
    assert (
        changed.status_code == 200
        and changed.json["allowed_roles"] == ["admin", "warehouse_manager"]
        and changed.json["overridden"]
    )
    after = client.post("/api/v1/chat", json={"message": "what is running low?"}, headers=staff).json
    assert all(c["name"] != "list_low_stock" for r in after["rounds"] for c in r["tool_calls"])
    reset = client.patch(
        "/api/v1/admin/tools/list_low_stock", json={"allowed_roles": None}, headers=admin
    ).json
    assert "warehouse_staff" in reset["allowed_roles"] and not reset["overridden"]


def test_tools_list_shows_schema_and_state(client, admin):
    tools = {t["name"]: t for t in client.get("/api/v1/admin/tools", headers=admin).json}
    assert tools["record_stock_movement"]["requires_confirmation"] is True
    assert tools["create_new_intent"]["allowed_roles"] == ["admin"]
    # a keyword, or a category or warehouse alone to list what it holds
    assert "required" not in tools["search_materials"]["parameters"]
    assert client.patch("/api/v1/admin/tools/nope", json={"enabled": False}, headers=admin).status_code == 404
    off = client.patch("/api/v1/admin/tools/format_report", json={"enabled": False}, headers=admin).json
    assert off["enabled"] is False


def test_intents_crud(client, admin):
    created = client.post(
        "/api/v1/admin/intents",
        json={"name": "pastry_words", "keywords": ["酥皮"], "tool_name": "search_materials"},
        headers=admin,
    )
    assert created.status_code == 201
    iid = created.json["id"]
    assert (
        client.post(
            "/api/v1/admin/intents",
            json={"name": "pastry_words", "keywords": ["x"], "tool_name": "search_materials"},
            headers=admin,
        ).status_code
        == 409
    )
    assert (
        client.post(
            "/api/v1/admin/intents",
            json={"name": "x2", "keywords": ["x"], "tool_name": "launch"},
            headers=admin,
        ).status_code
        == 422
    )
    assert client.patch(f"/api/v1/admin/intents/{iid}", json={"keywords": ["千层酥"]}, headers=admin).json[
        "keywords"
    ] == ["千层酥"]
    assert client.delete(f"/api/v1/admin/intents/{iid}", headers=admin).status_code == 204
    assert client.get(f"/api/v1/admin/intents/{iid}", headers=admin).status_code == 404
