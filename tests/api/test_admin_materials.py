"""Materials through the admin API: create, change and remove with search kept in step, every field
checked, lists paginated, filtered and counted up to a cap, and CSV imports that take every row or none."""

from __future__ import annotations

from sqlalchemy import func, select

from inventory_ai.models import Material
from inventory_ai.services.search import search_materials

NEW = {
    "code": "M900",
    "name_zh": "芝士粉",
    "name_en": "Cheese Powder",
    "unit": "kg",
    "category": "DA",
    "reorder_point": "10",
    "unit_cost": "55.5",
}


def test_material_crud_keeps_search_in_step(client, admin, session):
    created = client.post("/api/v1/admin/materials", json=NEW, headers=admin)
    assert (
        created.status_code == 201
        and created.json["category"] == "DA"
        and created.json["unit_cost"] == "55.5000"
    )
    assert [m.code for m in search_materials(session, "芝士粉").materials] == ["M900"]
    assert client.post("/api/v1/admin/materials", json=NEW, headers=admin).status_code == 409
    patched = client.patch(
        "/api/v1/admin/materials/M900", json={"name_en": "Parmesan Powder"}, headers=admin
    ).json
    assert patched["name_en"] == "Parmesan Powder"
    session.expire_all()
    assert [m.code for m in search_materials(session, "parmesan").materials] == ["M900"]
    assert client.delete("/api/v1/admin/materials/M900", headers=admin).json["active"] is False
    assert search_materials(session, "parmesan").materials == []
    assert client.get("/api/v1/admin/materials/M404", headers=admin).status_code == 404


def test_material_validation(client, admin):
    bad = client.post(
        "/api/v1/admin/materials", json={**NEW, "unit": "bushel", "name_zh": "", "extra": 1}, headers=admin
    )
    assert bad.status_code == 422 and {"unit", "name_zh", "extra"} <= set(
        bad.json["error"]["details"]["json"]
    )
    negative = client.post(
        "/api/v1/admin/materials", json={**NEW, "reorder_point": "-1", "unit_cost": "1e20"}, headers=admin
    )
    assert negative.status_code == 422
    # the API schema checks every decimal (units.checked_decimal) before the warehouse rules run
    assert set(negative.json["error"]["details"]["json"]) == {"reorder_point", "unit_cost"}
    unknown_category = client.post(
        "/api/v1/admin/materials", json={**NEW, "category": "Rockets"}, headers=admin
    )
    assert unknown_category.status_code == 422 and "category" in unknown_category.json["error"]["message"]


def test_materials_list_is_paginated_and_filtered(client, admin):
    page = client.get("/api/v1/admin/materials?per_page=5&page=2&category=FL", headers=admin).json
    assert page["page"] == 2 and page["per_page"] == 5 and len(page["items"]) == 5 and page["total"] == 13
    assert client.get("/api/v1/admin/materials?per_page=500", headers=admin).status_code == 422


def test_a_list_total_is_counted_up_to_a_cap_and_says_so_beyond(client, admin, monkeypatch):
    """A million rows are not counted for a page: the total stops at COUNT_CAP and says it did."""
    from inventory_ai.api.admin import common

    monkeypatch.setattr(common, "COUNT_CAP", 5)
    page = client.get("/api/v1/admin/materials?per_page=2", headers=admin).json
    assert (page["total"], page["total_capped"], len(page["items"])) == (5, True, 2)
    levels = client.get("/api/v1/admin/stock/levels?per_page=2", headers=admin).json
    assert (levels["total"], levels["total_capped"]) == (5, True)
    monkeypatch.setattr(common, "COUNT_CAP", 10_000)
    exact = client.get("/api/v1/admin/materials?per_page=5&category=FL", headers=admin).json
    assert (exact["total"], exact["total_capped"]) == (13, False)


CSV_OK = "code,name_zh,name_en,unit,spec,category,supplier,reorder_point,unit_cost\nM901,燕麦片,Rolled Oats,kg,25kg/袋,FL,S01,50,9.5\nM902,椰子粉,Coconut Flour,kg,,FL,,20,21\n"


def test_csv_import_all_rows(client, admin, session):
    response = client.post(
        "/api/v1/admin/materials/import", data=CSV_OK.encode(), content_type="text/csv", headers=admin
    )
    assert response.status_code == 201 and response.json == {"imported": 2, "codes": ["M901", "M902"]}
    assert [m.code for m in search_materials(session, "椰子粉").materials] == ["M902"]


def test_csv_import_with_a_bad_row_imports_nothing_and_names_every_problem(client, admin, session):
    bad = CSV_OK + "M903,坏数据,Bad Row,bushel,,NOPE,,-3,x\nM901,重复,Duplicate,kg,,FL,,1,1\n"
    before = session.scalar(select(func.count()).select_from(Material))
    response = client.post(
        "/api/v1/admin/materials/import", data=bad.encode(), content_type="text/csv", headers=admin
    )
    assert response.status_code == 422
    problems = {(r["line"], r["field"]) for r in response.json["error"]["details"]["rows"]}
    assert {(4, "unit"), (4, "category"), (4, "reorder_point"), (4, "unit_cost"), (5, "code")} <= problems
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(Material)) == before


def test_csv_import_as_a_file_upload_and_bad_header(client, admin):
    import io

    upload = client.post(
        "/api/v1/admin/materials/import", data={"file": (io.BytesIO(CSV_OK.encode()), "m.csv")}, headers=admin
    )
    assert upload.status_code == 201
    header = client.post(
        "/api/v1/admin/materials/import", data=b"code,name\nM1,x\n", content_type="text/csv", headers=admin
    )
    assert header.status_code == 422 and "header" in header.json["error"]["message"]


def test_pages_by_number_reach_as_far_as_the_total_counts_and_after_goes_beyond(client, admin, monkeypatch):
    """A deep offset reads and skips every row before it (half a second at a million): a page by
    number that starts past the counted rows is refused with the way on, and `after` reaches it."""
    from inventory_ai.api.admin import common

    monkeypatch.setattr(common, "COUNT_CAP", 6)
    last_by_number = client.get("/api/v1/admin/materials?per_page=3&page=2", headers=admin)
    assert last_by_number.status_code == 200 and len(last_by_number.json["items"]) == 3
    beyond = client.get("/api/v1/admin/materials?per_page=3&page=3", headers=admin)
    assert beyond.status_code == 422 and "`after`" in beyond.json["error"]["message"]
    after = client.get(
        f"/api/v1/admin/materials?per_page=3&after={last_by_number.json['next']}", headers=admin
    )
    assert after.status_code == 200 and len(after.json["items"]) == 3
    assert after.json["items"][0]["code"] > last_by_number.json["items"][-1]["code"]
