"""What admins read back: the audit trail of a conversation, and the metrics."""

from __future__ import annotations


def test_read_the_audit_trail_of_a_conversation(client, admin, token, session):
    staff = token("staff")
    chat = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}, headers=staff).json
    conversations = client.get("/api/v1/admin/conversations?user=staff", headers=admin).json["items"]
    assert conversations[0]["id"] == chat["conversation_id"] and conversations[0]["username"] == "staff"
    full = client.get(f"/api/v1/admin/conversations/{chat['conversation_id']}", headers=admin).json
    assert full["messages"][1]["rounds"][0]["tool_calls"][0]["name"] == "search_materials"
    trail = client.get(
        f"/api/v1/admin/audit-events?conversation_id={chat['conversation_id']}", headers=admin
    ).json["items"]
    assert [(e["tool_name"], e["status"], e["arguments"]) for e in trail] == [
        ("search_materials", "success", {"keyword": "面粉"})
    ]
    by_user = client.get(
        "/api/v1/admin/audit-events?user=staff&tool=search_materials&status=success", headers=admin
    ).json
    assert by_user["total"] >= 1


def test_metrics(client, admin, token):
    staff = token("staff")
    for text in ("帮我查找面粉原料", "what is running low?", "你好"):
        client.post("/api/v1/chat", json={"message": text}, headers=staff)
    data = client.get("/api/v1/admin/metrics?days=7", headers=admin).json
    tools = {t["tool"]: t for t in data["tools"]}
    assert tools["search_materials"]["calls"] == 1 and tools["search_materials"]["success_rate"] == 1.0
    assert tools["list_low_stock"]["p95_ms"] is not None
    assert data["rounds_per_answer"] == {"0": 1, "1": 2}
    # The offline provider's calls are counted, and spend no tokens.
    assert [(r["user"], r["input_tokens"], r["output_tokens"]) for r in data["tokens_per_user_per_day"]] == [
        ("staff", 0, 0)
    ]
