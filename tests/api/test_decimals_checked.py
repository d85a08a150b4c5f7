"""Every decimal the API takes is checked for range and decimals before a database sees it: 422
naming the field, the same on SQLite and PostgreSQL (where "1e-16384" was a 500
NumericValueOutOfRange, and SQLite kept a silent 0). Material fields, CSV cells, booking
quantities, and the booking tool's arguments."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from inventory_ai.extensions import db
from inventory_ai.models import Material, StockMovement

HOSTILE = ["1e-16384", "1e-16383", "1E+400", "1e400", "NaN", "Infinity", "-1", "0.00001", "1" * 41]
HEADER = "code,name_zh,name_en,unit,spec,category,supplier,reorder_point,unit_cost\n"


def material(code: str, **decimals) -> dict:
    return {"code": code, "name_zh": "测试", "name_en": "Test", "unit": "kg", "category": "FL", **decimals}


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("field", ["reorder_point", "unit_cost"])
def test_a_material_decimal_out_of_range_or_too_fine_is_422_naming_the_field(client, admin, field, value):
    created = client.post("/api/v1/admin/materials", json=material("M950", **{field: value}), headers=admin)
    assert created.status_code == 422, created.json
    assert field in str(created.json["error"])
    patched = client.patch("/api/v1/admin/materials/M001", json={field: value}, headers=admin)
    assert patched.status_code == 422, patched.json
    assert field in str(patched.json["error"])


@pytest.mark.parametrize("value", HOSTILE)
def test_a_csv_cell_out_of_range_or_too_fine_is_422_naming_its_line_and_field(client, admin, session, value):
    before = session.scalar(select(func.count()).select_from(Material))
    csv = HEADER + f"M951,测试,Test,kg,,FL,,{value},1\nM952,测试,Test,kg,,FL,,1,{value}\n"
    response = client.post(
        "/api/v1/admin/materials/import", data=csv.encode(), content_type="text/csv", headers=admin
    )
    assert response.status_code == 422, response.json
    problems = {(r["line"], r["field"]) for r in response.json["error"]["details"]["rows"]}
    assert {(2, "reorder_point"), (3, "unit_cost")} <= problems
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(Material)) == before


def test_decimals_within_the_columns_are_kept_exactly(client, admin, session):
    created = client.post(
        "/api/v1/admin/materials", json=material("M953", reorder_point="0.001", unit_cost="999999999.9999"),
        headers=admin,
    )  # fmt: skip
    assert created.status_code == 201, created.json
    assert created.json["reorder_point"] == "0.001" and created.json["unit_cost"] == "999999999.9999"


@pytest.mark.parametrize("value", HOSTILE)
def test_a_booking_quantity_out_of_range_or_too_fine_is_422_naming_quantity(client, admin, session, value):
    body = {
        "material": "M001",
        "warehouse": "主仓库",
        "movement_type": "inbound",
        "quantity": value,
        "reason": "x",
    }
    response = client.post("/api/v1/admin/stock/movements", json=body, headers=admin)
    assert response.status_code == 422, response.json
    assert "quantity" in str(response.json["error"])
    assert (
        db.session.scalar(select(func.count()).select_from(StockMovement).where(StockMovement.quantity == 0))
        == 0
    )
