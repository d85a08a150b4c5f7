"""The stock figures the database keeps (migration 0017's triggers): each material's stock on hand and
how far below its reorder point it is, each level's, and stock_totals per warehouse and category.
After every kind of write they equal what aggregating the stock levels gives, on both databases."""

from __future__ import annotations

import threading
from collections import defaultdict
from decimal import Decimal

import pytest
from sqlalchemy import delete, select

from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel, StockTotal, Warehouse
from inventory_ai.services import bookings, materials, stats
from inventory_ai.services.catalog import find_category
from inventory_ai.services.ledger import book
from inventory_ai.services.sites import ALL, Sites
from tests.support.factories import MaterialFactory, StockLevelFactory

CENT = Decimal("0.0001")


def recomputed(session) -> dict:
    """stock_totals as aggregating every level and material from scratch gives it."""
    session.commit()  # a fresh snapshot: the ledger wrote on its own connection
    session.expire_all()
    mats = {m.id: m for m in session.scalars(select(Material))}
    totals: dict = defaultdict(lambda: [0, Decimal(0), 0])
    on_hand: dict = defaultdict(Decimal)
    for lv in session.scalars(select(StockLevel)):
        m = mats[lv.material_id]
        on_hand[m.id] += lv.quantity
        _add(totals[(lv.warehouse_id, m.category_id)], m, lv.quantity)
    for m in mats.values():
        _add(totals[(0, m.category_id)], m, on_hand[m.id])
    return {k: (n, v.quantize(CENT), b) for k, (n, v, b) in totals.items() if (n, v, b) != (0, 0, 0)}


def _add(row: list, m: Material, quantity: Decimal) -> None:
    if m.active and quantity > 0:
        row[0] += 1
        row[1] += quantity * m.unit_cost
    if m.active and m.reorder_point > 0 and quantity < m.reorder_point:
        row[2] += 1


def kept(session) -> dict:
    session.commit()  # a fresh snapshot: the ledger wrote on its own connection
    session.expire_all()
    return {
        (t.warehouse_id, t.category_id): (
            t.materials_in_stock,
            Decimal(t.value).quantize(CENT),
            t.below_reorder,
        )
        for t in session.scalars(select(StockTotal))
        if (t.materials_in_stock, t.value, t.below_reorder) != (0, 0, 0)
    }


def assert_kept_right(session) -> None:
    assert kept(session) == recomputed(session)
    levels = defaultdict(Decimal)
    for lv in session.scalars(select(StockLevel)):
        levels[lv.material_id] += lv.quantity
        m = session.get(Material, lv.material_id)
        low = m.active and m.reorder_point > 0 and lv.quantity < m.reorder_point
        assert (lv.low_ratio is not None) == low, (m.code, lv.warehouse_id, lv.quantity)
    for m in session.scalars(select(Material)):
        assert m.on_hand == levels[m.id], m.code
        low = m.active and m.reorder_point > 0 and m.on_hand < m.reorder_point
        assert (m.low_ratio is not None) == low, m.code
        if low:
            assert m.low_ratio == pytest.approx(float(m.on_hand / m.reorder_point))


def booking(
    movement_type: str, quantity: str, material: str = "M001", warehouse: str = "主仓库", **more
) -> None:
    arguments = dict(
        material=material, warehouse=warehouse, movement_type=movement_type, quantity=quantity, unit="kg",
        reason="test", **more,
    )  # fmt: skip
    book(db.engine, bookings.load(arguments, None, None))


def low_codes(session, **scope) -> list[str]:
    session.commit()
    return [
        item["code"] for item in stats.low_stock(session, stats.Scope(**scope), limit=50, sites=ALL)["items"]
    ]


def test_the_seeded_figures_are_kept(app, session):
    assert_kept_right(session)


@pytest.mark.parametrize(
    "movement_type, quantity, more",
    [
        ("inbound", "250", {}),
        ("outbound", "95", {}),
        ("adjustment", "3", {}),
        ("adjustment", "0", {}),
        ("transfer", "60", {"to_warehouse": "WH02"}),
    ],
)
def test_every_kind_of_booking_keeps_them(app, session, movement_type, quantity, more):
    booking(movement_type, quantity, **more)
    assert_kept_right(session)


def test_a_material_crossing_its_reorder_point_comes_and_goes_from_low_stock(app, session):
    m = session.scalar(select(Material).where(Material.code == "M001"))
    materials.update_material(session, "M001", {"reorder_point": str(m.on_hand + 50)})
    assert "M001" in low_codes(session)
    low_before = stats.low_stock(session, stats.Scope(), limit=0, sites=ALL)["total"]
    booking("inbound", "60")
    assert "M001" not in low_codes(session)
    assert stats.low_stock(session, stats.Scope(), limit=0, sites=ALL)["total"] == low_before - 1
    booking("outbound", "20")
    assert "M001" in low_codes(session)
    assert stats.low_stock(session, stats.Scope(), limit=0, sites=ALL)["total"] == low_before
    assert_kept_right(session)


def test_a_transfer_moves_the_shortfall_between_warehouses_not_the_total(app, session):
    wh01, wh02 = (session.scalar(select(Warehouse.id).where(Warehouse.code == c)) for c in ("WH01", "WH02"))
    materials.update_material(session, "M001", {"reorder_point": "50"})
    booking("inbound", "100")
    session.commit()
    level = session.scalar(
        select(StockLevel).join(Material).where(Material.code == "M001", StockLevel.warehouse_id == wh01)
    )
    all_before = "M001" in low_codes(session)
    booking("transfer", str(level.quantity), to_warehouse="WH02")  # all of it
    assert "M001" in low_codes(session, warehouse_id=wh01)
    assert "M001" not in low_codes(session, warehouse_id=wh02)
    assert ("M001" in low_codes(session)) == all_before  # the total did not change
    assert_kept_right(session)


def test_changes_to_a_material_keep_them(app, session):
    materials.update_material(session, "M001", {"reorder_point": "100000"})
    assert "M001" in low_codes(session)
    materials.update_material(session, "M001", {"unit_cost": "123.4567"})
    other = session.scalar(select(Material).where(Material.code == "M002"))
    materials.update_material(session, "M001", {"category": other.category.code})
    assert_kept_right(session)
    materials.deactivate_material(session, "M001")
    assert "M001" not in low_codes(session)
    assert_kept_right(session)
    materials.update_material(session, "M001", {"active": True, "reorder_point": "0"})
    assert "M001" not in low_codes(session)
    assert_kept_right(session)


def test_writes_outside_the_services_keep_them_too(app, session):
    m = MaterialFactory(reorder_point=Decimal("10"), unit_cost=Decimal("2"))
    assert_kept_right(session)  # a new material, no stock: below its reorder point everywhere
    assert m.code in low_codes(session)
    StockLevelFactory(material=m, warehouse="WH02", quantity=Decimal("4"))
    level = StockLevelFactory(material=m, warehouse="WH01", quantity=Decimal("40"))
    assert_kept_right(session)
    assert m.code not in low_codes(session)
    level.quantity = Decimal("1")
    session.commit()
    assert_kept_right(session)
    session.execute(delete(StockLevel).where(StockLevel.material_id == m.id))
    session.commit()
    assert_kept_right(session)


def test_the_figures_read_from_the_kept_rows_match_the_levels(app, session):
    flour = find_category(session, "FL")
    figures = stats.inventory_stats(session, stats.Scope(), sites=ALL)
    expected = recomputed(session)
    assert figures["materials_in_stock"] == sum(n for (w, _), (n, _, _) in expected.items() if w == 0)
    assert figures["below_reorder_point"] == sum(b for (w, _), (_, _, b) in expected.items() if w == 0)
    one = stats.inventory_stats(session, stats.Scope(category_id=flour.id), sites=ALL)
    assert one["materials_in_stock"] == expected.get((0, flour.id), (0, 0, 0))[0]
    assert [r["category"] for r in one["by_category"]] == [flour.name_zh]


def test_opposite_transfers_in_one_category_at_once_all_book(app, session):
    """Transfers of two materials of one category in opposite directions, at once: both change the
    same totals rows (both warehouses', all warehouses'); every booking goes through and the figures
    stay right. On PostgreSQL this deadlocked while a booking took those rows after its levels
    (creating a level fires its trigger first); a booking now takes them first, in one order."""
    flour = find_category(session, "FL")
    first, second = session.scalars(
        select(Material.code).where(Material.category_id == flour.id).order_by(Material.code).limit(2)
    ).all()
    for code, place in ((first, "主仓库"), (second, "冷库")):
        book(db.engine, bookings.load(dict(material=code, warehouse=place, movement_type="inbound",
                                           quantity="100", unit="kg", reason="test"), None, None))  # fmt: skip
    errors: list[BaseException] = []
    start = threading.Barrier(2)
    engine = db.engine

    def worker(code: str, source: str, target: str) -> None:
        start.wait()
        for _ in range(10):
            arguments = dict(material=code, warehouse=source, movement_type="transfer", quantity="1", unit="kg",
                             to_warehouse=target, reason="test")  # fmt: skip
            try:
                book(engine, bookings.load(arguments, None, None))
            except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
                errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(first, "主仓库", "WH02")),
        threading.Thread(target=worker, args=(second, "冷库", "WH01")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert_kept_right(session)


@pytest.mark.parametrize("codes", [("WH02",), ("WH01",), ("WH01", "WH03")])
def test_a_person_of_some_warehouses_gets_the_figures_counted_from_their_levels(app, session, codes):
    """One warehouse is read from the kept rows, several are counted from their levels: either way
    the same figures as counting that person's stock levels from scratch."""
    booking("outbound", "95")
    warehouses = session.scalars(select(Warehouse).where(Warehouse.code.in_(codes))).all()
    mine = Sites(frozenset(w.id for w in warehouses), frozenset(codes))
    figures = stats.inventory_stats(session, stats.Scope(), sites=mine)
    counted = stats._stats_counted(session, stats.Scope(), mine)
    assert figures == counted
    assert {r["warehouse"] for r in figures["by_warehouse"]} <= {w.name_zh for w in warehouses}
    low = stats.low_stock(session, stats.Scope(), limit=50, sites=mine)
    assert low == stats._low_counted(session, stats.Scope(), 50, mine)
