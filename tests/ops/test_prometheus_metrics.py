"""The Prometheus scrape at /metrics: what it counts, for whom."""

from __future__ import annotations


def test_prometheus_metrics(app, client, auth):
    auth.login("staff")
    client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"})
    text = client.get("/metrics").get_data(as_text=True)
    assert 'inventory_ai_tool_calls_total{status="success",tool="search_materials"}' in text
    assert 'inventory_ai_model_calls_total{provider="offline",status="success"}' in text
    assert "inventory_ai_http_requests_total" in text and "inventory_ai_model_breaker_open" in text
