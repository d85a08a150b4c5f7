"""Admin lists as they hold up with many rows: paged by a cursor (`after=<next>`), every row once, in
order, while rows are added, a cursor that is not one of ours refused (422); a page's statements do
not grow with its length."""

from __future__ import annotations

import base64
import json

import pytest
from sqlalchemy import event, func, select

from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel, StockMovement
from inventory_ai.services.search_index import synonyms_of
from tests.api.test_admin_materials import NEW


def walk(client, admin, path: str, between=None) -> list[dict]:
    """Every item of a list, page by page through `next`, calling `between(step)` after each page."""
    seen, after, step = [], None, 0
    while True:
        page = client.get(path + (f"&after={after}" if after else ""), headers=admin).json
        assert page["page"] is None if after else page["page"] == 1
        seen += page["items"]
        after = page["next"]
        if after is None:
            return seen
        if between:
            between(step)
        step += 1


def new_material(code: str) -> dict:
    return {**NEW, "code": code, "name_zh": f"测试料{code}", "name_en": f"Test {code}"}


def test_keyset_pages_give_every_row_once_in_order_while_rows_are_added(client, admin, session):
    """`after` pages from the last row shown, not by an offset: rows added meanwhile before the cursor
    shift nothing (an offset page would repeat a row), those after it are listed in their place."""
    before = [m.code for m in session.scalars(select(Material).order_by(Material.code))]

    def add(step):  # one behind the cursor, one ahead of it (codes sort as text: "M" < "M0…" < "Z")
        for code in (f"M0{step:02d}X", f"Z{step:02d}"):
            assert (
                client.post("/api/v1/admin/materials", json=new_material(code), headers=admin).status_code
                == 201
            )

    codes = [m["code"] for m in walk(client, admin, "/api/v1/admin/materials?per_page=4", add)]
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    assert set(before) <= set(codes)
    assert {f"Z{step:02d}" for step in range(len(before) // 4 - 1)} <= set(codes)


def test_keyset_pages_of_the_latest_first_lists_while_movements_are_booked(client, admin, session):
    first = [m.id for m in session.scalars(select(StockMovement))]
    body = {"material": "M001", "warehouse": "WH01", "quantity": "1", "unit": "kg", "reason": "keyset"}

    def book(step):  # a new movement is the newest: it belongs before the cursor
        kind = "inbound" if step % 2 == 0 else "outbound"
        assert (
            client.post(
                "/api/v1/admin/stock/movements", json={**body, "movement_type": kind}, headers=admin
            ).status_code
            == 201
        )

    # Pages of 50: the seed's 6,291 movements share 181 times (~35 a time), so nearly every page ends
    # inside a run of equal times, where only the id orders them; pages of 5 walked the same ties
    # with 1,258 pages and bookings (47 s here) instead of 126.
    listed = walk(client, admin, "/api/v1/admin/stock/movements?per_page=50", book)
    ids = [m["id"] for m in listed]
    keys = [(m["created_at"], m["id"]) for m in listed]
    assert keys == sorted(keys, reverse=True) and len(ids) == len(set(ids))
    assert sorted(ids) == sorted(first)  # every one there at the start, once; none booked meanwhile

    levels = walk(client, admin, "/api/v1/admin/stock/levels?per_page=3")  # a two-column order
    pairs = [(level["material"], level["warehouse"]) for level in levels]
    assert len(pairs) == len(set(pairs)) == session.scalar(select(func.count()).select_from(StockLevel))


def test_a_keyset_cursor_is_checked(client, admin):
    last = client.get("/api/v1/admin/materials?per_page=200", headers=admin).json
    assert last["next"] is None
    first = client.get("/api/v1/admin/materials?per_page=2&page=2", headers=admin).json
    assert first["page"] == 2 and first["next"]
    both = client.get(f"/api/v1/admin/materials?page=2&after={first['next']}", headers=admin)
    assert both.status_code == 422
    for cursor in ("nonsense", first["next"][:-3], "WzEsMl0"):  # not base64 JSON; cut; [1,2]
        refused = client.get(f"/api/v1/admin/materials?after={cursor}", headers=admin)
        assert refused.status_code == 422, cursor
    other = client.get("/api/v1/admin/stock/movements?per_page=1", headers=admin).json["next"]
    assert client.get(f"/api/v1/admin/materials?after={other}", headers=admin).status_code == 422


def forged(values: list) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("path", "values"),
    [
        ("users", [10**30]),  # no database integer holds it
        ("users", [-(2**63) - 1]),
        ("audit-events", ["2026-01-01T00:00:00", 2**63]),
        ("materials", ["a\x00b"]),  # PostgreSQL refuses a NUL in text
        ("materials", ["\ud800"]),  # a lone surrogate has no UTF-8
        ("conversations", ["2026-01-01T00:00:00", "x\x00"]),
    ],
)
def test_a_forged_cursor_with_values_no_column_takes_is_refused_not_a_server_error(
    client, admin, path, values
):
    refused = client.get(f"/api/v1/admin/{path}?after={forged(values)}", headers=admin)
    assert refused.status_code == 422, refused.json


def test_a_materials_page_reads_its_synonyms_at_once(client, admin, session):
    """Each material shows its own synonyms, and a page of 50 costs as many statements as a page of 2."""
    body = {**new_material("M000A"), "synonyms": ["芝士末", "奶酪粉"]}
    assert client.post("/api/v1/admin/materials", json=body, headers=admin).status_code == 201

    def statements_for(per_page: int) -> tuple[int, dict]:
        seen = []
        listen = lambda *args: seen.append(args[2])  # noqa: E731
        event.listen(db.engine, "before_cursor_execute", listen)
        try:
            page = client.get(f"/api/v1/admin/materials?per_page={per_page}", headers=admin).json
        finally:
            event.remove(db.engine, "before_cursor_execute", listen)
        return len(seen), {m["code"]: m["synonyms"] for m in page["items"]}

    few, _ = statements_for(2)
    many, shown = statements_for(50)
    assert many == few
    assert shown["M000A"] == ["芝士末", "奶酪粉"]
    assert shown == {code: synonyms_of(session, [code]).get(code, []) for code in shown}
