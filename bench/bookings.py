"""200 concurrent 1-unit outbound bookings against a stock of 100: exactly 100 must succeed.

    .venv/bin/python bench/bookings.py postgresql      # 127.0.0.1:5432, trust auth
    .venv/bin/python bench/bookings.py sqlite

Each booking goes through the ledger service (its own transaction, row lock on PostgreSQL, write lock
on SQLite) from its own thread, all released at once by a barrier. Reported: successes, refusals,
final level, ledger sum, wall time and bookings per second.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from decimal import Decimal

from _common import seeded_app
from sqlalchemy import func, select

from inventory_ai.errors import InsufficientStock
from inventory_ai.extensions import db
from inventory_ai.models import Category, Material, StockLevel, StockMovement, Warehouse
from inventory_ai.services import bookings
from inventory_ai.services.ledger import book

CLIENTS = 200


def _booking(material: str, warehouse: str, movement_type: str, quantity: str, reason: str):
    fields = {"material": material, "warehouse": warehouse, "movement_type": movement_type,
              "quantity": quantity, "unit": "kg", "reason": reason}  # fmt: skip
    return bookings.load(fields, None, None)


def main() -> None:
    logging.disable(logging.INFO)
    kind = sys.argv[1] if len(sys.argv) > 1 else "sqlite"
    url = None
    if kind == "postgresql":
        from sqlalchemy import create_engine, text

        admin = create_engine(
            "postgresql+psycopg://postgres@127.0.0.1:5432/test", isolation_level="AUTOCOMMIT"
        )
        with admin.connect() as conn:
            conn.execute(text('DROP DATABASE IF EXISTS "iai_bench_bookings" WITH (FORCE)'))
            conn.execute(text('CREATE DATABASE "iai_bench_bookings"'))
        admin.dispose()
        url = "postgresql+psycopg://postgres@127.0.0.1:5432/iai_bench_bookings"
    app = seeded_app(url)
    with app.app_context():
        # A fresh material with exactly 100 in the main warehouse.
        warehouse = db.session.scalar(select(Warehouse).where(Warehouse.code == "WH01"))
        material = Material(
            code="B100",
            name_zh="基准原料",
            name_en="Bench Material",
            name_en_key="bench material",
            unit="kg",
            category_id=db.session.scalar(select(Category.id).order_by(Category.id)),
        )
        db.session.add(material)
        db.session.commit()
        book(db.engine, _booking("B100", warehouse.code, "inbound", "100", "bench stock"))
        barrier = threading.Barrier(CLIENTS)
        results: list[str] = []
        lock = threading.Lock()
        engine = db.engine

        def client(n: int) -> None:
            barrier.wait()
            try:
                book(engine, _booking("B100", "WH01", "outbound", "1", f"bench {n}"))
                outcome = "ok"
            except InsufficientStock:
                outcome = "refused"
            except Exception as exc:  # reported, not hidden
                outcome = f"error {type(exc).__name__}"
            with lock:
                results.append(outcome)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
        level = db.session.scalar(select(StockLevel.quantity).where(StockLevel.material_id == material.id))
        ledger = db.session.scalar(
            select(func.sum(StockMovement.quantity)).where(StockMovement.material_id == material.id)
        )
        errors = [r for r in results if r.startswith("error")]
        print(
            f"| {kind} | {CLIENTS} | {results.count('ok')} | {results.count('refused')} | {len(errors)} | {level} | "
            f"{Decimal(ledger).quantize(Decimal('0.001'))} | {elapsed:.2f} s | {CLIENTS / elapsed:.0f} |"
        )
        assert results.count("ok") == 100 and level == 0 and not errors, results


if __name__ == "__main__":
    main()
