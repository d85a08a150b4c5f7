"""The stock ledger: one service books every movement, exactly, once, and never below zero."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from inventory_ai.errors import InsufficientStock, InvalidInput, NotFound
from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel, StockMovement
from inventory_ai.services import bookings
from inventory_ai.services.bookings import BookingRequest
from inventory_ai.services.ledger import book, describe_booking


def level(session, code: str, warehouse: str = "WH01") -> Decimal:
    session.expire_all()
    return session.scalar(
        select(StockLevel.quantity)
        .join(Material, Material.id == StockLevel.material_id)
        .where(Material.code == code, StockLevel.warehouse_id == _warehouse_id(session, warehouse))
    ) or Decimal(0)


def _warehouse_id(session, code):
    from inventory_ai.models import Warehouse

    return session.scalar(select(Warehouse.id).where(Warehouse.code == code))


def ledger_sum(session, code: str, warehouse: str = "WH01") -> Decimal:
    total = session.scalar(
        select(func.sum(StockMovement.quantity))
        .join(Material, Material.id == StockMovement.material_id)
        .where(Material.code == code, StockMovement.warehouse_id == _warehouse_id(session, warehouse))
    )
    return Decimal(total).quantize(Decimal("0.001"))


def req(idempotency_key: str | None = None, **kw) -> BookingRequest:
    base = dict(
        material="M001", warehouse="主仓库", movement_type="outbound", quantity="20", unit="kg", reason="test"
    )
    base.update(kw)
    return bookings.load(base, None, idempotency_key)


def test_outbound_moves_the_level_and_writes_the_ledger(app, session):
    result = book(db.engine, req())
    assert (result.level_before, result.level_after) == (Decimal("100"), Decimal("80"))
    assert level(session, "M001") == Decimal("80") == ledger_sum(session, "M001")
    movement = session.get(StockMovement, result.movement_id)
    assert movement.quantity == Decimal("-20") and movement.reason == "test"


def test_units_are_converted_to_the_materials_unit(app, session):
    book(db.engine, req(quantity="10", unit="斤"))  # 5 kg
    book(db.engine, req(quantity="500", unit="克"))  # 0.5 kg
    book(db.engine, req(quantity="1.5", unit="公斤"))
    assert level(session, "M001") == Decimal("93")
    with pytest.raises(InvalidInput, match="cannot convert"):
        book(db.engine, req(unit="L"))
    with pytest.raises(InvalidInput, match="unknown unit"):
        book(db.engine, req(unit="bushel"))


def test_booking_below_zero_is_refused_with_the_numbers(app, session):
    with pytest.raises(InsufficientStock, match=r"insufficient stock: have 100 kg, asked 150 kg"):
        book(db.engine, req(quantity="150"))
    assert level(session, "M001") == Decimal("100")
    assert ledger_sum(session, "M001") == Decimal("100")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"quantity": "-5"}, "positive"),
        ({"quantity": "0"}, "positive"),
        ({"quantity": "abc"}, "number"),
        ({"quantity": "NaN"}, "finite"),
        ({"movement_type": "teleport"}, "movement_type"),
        ({"reason": "  "}, "reason"),
        ({"movement_type": "transfer"}, "to_warehouse"),
        ({"movement_type": "transfer", "to_warehouse": "主仓库"}, "two different"),
    ],
)
def test_bad_bookings_are_refused_and_write_nothing(app, session, change, message):
    before = session.scalar(select(func.count()).select_from(StockMovement))
    with pytest.raises(InvalidInput, match=message):
        book(db.engine, req(**change))
    assert session.scalar(select(func.count()).select_from(StockMovement)) == before


def test_unknown_material_and_warehouse(app):
    with pytest.raises(NotFound, match="no material"):
        book(db.engine, req(material="火箭燃料"))
    with pytest.raises(NotFound, match="warehouses are"):
        book(db.engine, req(warehouse="Moon Base"))


def test_adjustment_sets_the_counted_level(app, session):
    result = book(db.engine, req(movement_type="adjustment", quantity="97.5"))
    assert result.quantity == Decimal("-2.5")
    assert level(session, "M001") == Decimal("97.5") == ledger_sum(session, "M001")


def test_transfer_writes_two_rows_and_moves_both_levels(app, session):
    result = book(db.engine, req(movement_type="transfer", quantity="30", to_warehouse="冷库"))
    assert level(session, "M001") == Decimal("70")
    assert level(session, "M001", "WH02") == Decimal("30") == ledger_sum(session, "M001", "WH02")
    assert result.to_warehouse == "冷库" and result.to_level_after == Decimal("30")


def test_inbound_creates_a_level_where_there_was_none(app, session):
    book(db.engine, req(movement_type="inbound", warehouse="包材仓", quantity="12"))
    assert level(session, "M001", "WH03") == Decimal("12")


def test_idempotency_key_books_once_and_returns_the_first_result(app, session):
    first = book(db.engine, req(idempotency_key="abc-1"))
    again = book(db.engine, req(idempotency_key="abc-1"))
    assert again.replayed and again.movement_id == first.movement_id
    assert again.level_after == first.level_after == Decimal("80")
    assert level(session, "M001") == Decimal("80")


def test_describe_booking_is_a_sentence_people_approve(app, session):
    assert describe_booking(session, req()) == "出库 20 kg 高筋面粉 (M001)，主仓库"
    assert describe_booking(session, req(), "en") == "Book out 20 kg Bread Flour (M001) in Main Warehouse"


@pytest.mark.slow
def test_concurrent_bookings_never_lose_an_update(app, session):
    """24 threads book 5 kg out of 100 kg at once: exactly 20 succeed, stock ends at 0."""
    outcomes: list[str] = []
    lock = threading.Lock()
    engine = db.engine
    start = threading.Barrier(24)

    def worker(n: int) -> None:
        start.wait()
        try:
            book(engine, req(quantity="5", reason=f"thread {n}"))
            result = "ok"
        except InsufficientStock:
            result = "refused"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert outcomes.count("ok") == 20 and outcomes.count("refused") == 4
    assert level(session, "M001") == Decimal("0") == ledger_sum(session, "M001")


@pytest.mark.slow
def test_concurrent_retries_with_one_key_book_once(app, session):
    engine = db.engine
    start = threading.Barrier(8)
    results = []

    def worker() -> None:
        start.wait()
        results.append(book(engine, req(quantity="1", idempotency_key="same-key")))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len({r.movement_id for r in results}) == 1
    assert level(session, "M001") == Decimal("99")
