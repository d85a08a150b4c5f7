"""Stock through the admin API: bookings with an idempotency key, refusals that are clear and write
nothing, the movements' filters, and purchase requests approved or rejected."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from inventory_ai.models import StockMovement


def test_booking_through_the_api_with_an_idempotency_key(client, admin, session):
    body = {
        "material": "M001",
        "warehouse": "WH01",
        "movement_type": "outbound",
        "quantity": "12.5",
        "unit": "kg",
        "reason": "line 2",
    }
    first = client.post(
        "/api/v1/admin/stock/movements", json=body, headers={**admin, "Idempotency-Key": "k-1"}
    )
    again = client.post(
        "/api/v1/admin/stock/movements", json=body, headers={**admin, "Idempotency-Key": "k-1"}
    )
    assert first.status_code == 201 and first.json["level_after"] == "87.5"
    assert again.json["movement_id"] == first.json["movement_id"] and again.json["replayed"] is True
    levels = client.get("/api/v1/admin/stock/levels?material=M001", headers=admin).json["items"]
    assert levels == [
        {"material": "M001", "name": "高筋面粉", "warehouse": "WH01", "quantity": "87.500", "unit": "kg"}
    ]


def test_booking_refusals_are_clear_and_write_nothing(client, admin, session):
    before = session.scalar(select(func.count()).select_from(StockMovement))
    too_much = client.post(
        "/api/v1/admin/stock/movements",
        json={
            "material": "M001",
            "warehouse": "WH01",
            "movement_type": "outbound",
            "quantity": "500",
            "reason": "x",
        },
        headers=admin,
    )
    assert too_much.status_code == 409 and too_much.json["error"]["message"].startswith(
        "insufficient stock: have 100 kg, asked 500 kg"
    )
    missing = client.post(
        "/api/v1/admin/stock/movements",
        json={
            "material": "M001",
            "warehouse": "Moon",
            "movement_type": "outbound",
            "quantity": "1",
            "reason": "x",
        },
        headers=admin,
    )
    assert missing.status_code == 404
    invalid = client.post(
        "/api/v1/admin/stock/movements",
        json={"material": "M001", "warehouse": "WH01", "movement_type": "teleport", "quantity": "abc"},
        headers=admin,
    )
    assert invalid.status_code == 422 and {"movement_type", "quantity", "reason"} <= set(
        invalid.json["error"]["details"]["json"]
    )
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(StockMovement)) == before


def test_movements_filters(client, admin):
    page = client.get(
        "/api/v1/admin/stock/movements?material=M001&movement_type=inbound&per_page=3", headers=admin
    ).json
    assert page["total"] > 3 and all(
        m["movement_type"] == "inbound" and m["material"] == "M001" for m in page["items"]
    )
    window = client.get(
        "/api/v1/admin/stock/movements?since=2026-11-01T00:00:00&until=2026-11-30T00:00:00", headers=admin
    ).json
    assert all("2026-11" in m["created_at"] for m in window["items"])


def test_purchase_requests_approve_and_reject(client, admin, token):
    manager = token("manager")
    asked = client.post("/api/v1/chat", json={"message": "申请采购低筋面粉500公斤"}, headers=manager).json
    request_id = json.loads(asked["rounds"][0]["results"][0]["content"])["purchase_request_id"]
    pending = client.get("/api/v1/admin/purchase-requests?status=pending", headers=admin).json["items"]
    assert [p["id"] for p in pending] == [request_id] and pending[0]["quantity"] == "500.000"
    assert (
        client.post(f"/api/v1/admin/purchase-requests/{request_id}/approve", headers=admin).json["status"]
        == "approved"
    )
    assert (
        client.post(f"/api/v1/admin/purchase-requests/{request_id}/reject", headers=admin).status_code == 409
    )
    assert client.post("/api/v1/admin/purchase-requests/999/approve", headers=admin).status_code == 404
