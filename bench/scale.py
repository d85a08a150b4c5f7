"""Every tool, page and admin list at scale: p50/p95 per call, and the worker's peak memory.

    .venv/bin/python bench/scale.py sqlite 10000 100000
    .venv/bin/python bench/scale.py postgresql 10000 100000 1000000   # 127.0.0.1:5432 (trust)
    .venv/bin/python bench/scale.py sqlite --below 0.5 100000          # half below the reorder point
    .venv/bin/python bench/scale.py postgresql --reuse 1000000         # query inv_scale_1000000 again
    .venv/bin/python bench/scale.py sqlite --reuse /tmp/iai-scale-x/scale_100000.db  # a kept SQLite file

For each size a fresh database (SQLite in a temporary folder; PostgreSQL `inv_scale_<size>`) is
migrated and filled in a child process (SCALE_DB_PREFIX names the PostgreSQL databases otherwise): bench/search.py's generated materials (reorder point 10), one
stock level each (a tenth in two warehouses), `--below` of them (default 0.9) below the reorder point,
and one inbound movement per level spread over the last year. Then another child process (so its
peak RSS is the reading worker's, not the filler's) calls:
- every tool through `manager.call_directly` (the registry, the checks, the read deadlines: what MCP
  and the page's "show all" use); the two writes (`record_stock_movement`, `create_purchase_request`)
  through their executor with a real `ToolContext`, as the loop runs them once approved;
- the pages (overview, approvals, the conversation list) and the admin lists through Flask's test
  client, logged in as the admin.
Each case runs `--repeat` times (default 15) after one warm-up call, or fewer when one call takes
more than `--budget` seconds in all (default 20 s; the row says how many ran).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from _common import percentile
from sqlalchemy import create_engine, select, text

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db

HERE = Path(__file__).resolve()
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


PREFIX = os.environ.get("SCALE_DB_PREFIX", "inv_scale")  # two runs at once: a prefix each


def pg_url(size: int) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{PREFIX}_{size}"


def fresh_database(kind: str, size: int) -> str:
    if kind == "sqlite":
        folder = tempfile.mkdtemp(prefix="iai-scale-")
        return f"sqlite:///{folder}/scale_{size}.db"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{PREFIX}_{size}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{PREFIX}_{size}"'))
    admin.dispose()
    return pg_url(size)


# --- filling ---------------------------------------------------------------------------------
# A million materials through the ORM took hours here: the rows go in through the driver instead
# (COPY on PostgreSQL, executemany in large transactions on SQLite), with the stock-totals triggers
# dropped meanwhile; migration 0017's own backfill then works the kept totals out once, and the
# triggers are put back before anything is measured.

STAMP = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores a DATETIME on SQLite


def sqlite_value(value):
    if isinstance(value, Decimal):
        return str(value)  # NUMERIC affinity stores it as a number, as SQLAlchemy's float would be
    if isinstance(value, datetime):
        return value.strftime(STAMP)
    if isinstance(value, bool):
        return int(value)
    return value


def bulk_insert(kind: str, table: str, columns: list[str], rows) -> None:
    """Rows (tuples in the order of `columns`) into `table` through the driver, in the session's
    transaction."""
    raw = db.session.connection().connection.driver_connection
    if kind == "postgresql":
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
    else:
        marks = ", ".join("?" for _ in columns)
        raw.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def bulk_dicts(kind: str, table: str, rows: list[dict]) -> None:
    if rows:
        columns = list(rows[0])
        convert = (lambda v: v) if kind == "postgresql" else sqlite_value
        bulk_insert(kind, table, columns, [tuple(convert(r[c]) for c in columns) for r in rows])


# The search index's own indexes, built once after the load (a sort) rather than grown by 70 million
# random inserts. On SQLite the primary key cannot be dropped: the terms go through a staging
# table and into the real one in the key's order.
TERM_COLUMNS = ["term", "field", "material_id"]
TERM_INDEX = "ix_material_search_terms_material_field_term"


def terms_before(kind: str) -> str:
    if kind == "postgresql":
        db.session.execute(text(f"DROP INDEX {TERM_INDEX}"))
        db.session.execute(text("ALTER TABLE material_search_terms DROP CONSTRAINT pk_material_search_terms"))
        target = "material_search_terms"
    else:
        db.session.execute(text(f"DROP INDEX {TERM_INDEX}"))
        db.session.execute(text("CREATE TABLE staged_terms (term TEXT, field INTEGER, material_id INTEGER)"))
        target = "staged_terms"
    db.session.commit()
    return target


def terms_after(kind: str) -> None:
    started = time.perf_counter()
    if kind == "postgresql":
        db.session.execute(text("SET maintenance_work_mem = '512MB'"))
        db.session.execute(
            text(
                "ALTER TABLE material_search_terms ADD CONSTRAINT pk_material_search_terms "
                "PRIMARY KEY (term, field, material_id)"
            )
        )
    else:
        db.session.execute(
            text(
                "INSERT INTO material_search_terms (term, field, material_id) "
                "SELECT term, field, material_id FROM staged_terms ORDER BY term, field, material_id"
            )
        )
        db.session.execute(text("DROP TABLE staged_terms"))
    db.session.execute(text(f"CREATE INDEX {TERM_INDEX} ON material_search_terms (material_id, field, term)"))
    db.session.commit()
    print(f"  search index keys built in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def migration_0017():
    spec = importlib.util.spec_from_file_location(
        "stock_totals_0017", HERE.parent.parent / "migrations" / "versions" / "0017_stock_totals.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_migration_ops(work) -> None:
    """Run `work` (functions of migration 0017 using alembic's `op`) on the session's connection."""
    from alembic.operations import Operations
    from alembic.runtime.migration import MigrationContext

    context = MigrationContext.configure(db.session.connection())
    with Operations.context(context):
        work()
    db.session.commit()


def stock_rows(material_ids: range, warehouses: list[int], below: float, rng, now):
    """One level per material (a tenth in a second warehouse too), `below` of them under the
    reorder point (10), and the inbound movement that put it there."""
    levels, moves = [], []
    for material_id in material_ids:
        places = [warehouses[material_id % len(warehouses)]]
        if material_id % 10 == 0:
            places.append(warehouses[(material_id + 1) % len(warehouses)])
        for warehouse_id in places:
            share = Decimal(10) / len(places)
            if rng.random() < below:
                quantity = (share * Decimal(rng.randrange(0, 1000)) / 1000).quantize(Decimal("0.001"))
            else:
                quantity = Decimal(rng.randrange(10, 500))
            levels.append(
                {
                    "material_id": material_id,
                    "warehouse_id": warehouse_id,
                    "quantity": quantity,
                    "updated_at": now,
                }
            )
            if quantity > 0:
                moves.append(
                    {
                        "material_id": material_id,
                        "warehouse_id": warehouse_id,
                        "movement_type": "inbound",
                        "quantity": quantity,
                        "level_before": 0,
                        "level_after": quantity,
                        "reason": "bench fill",
                        "created_at": now - timedelta(minutes=rng.randrange(0, 365 * 24 * 60)),
                    }
                )
    return levels, moves


def do_fill(kind: str, url: str, size: int, below: float) -> None:
    import flask_migrate
    from search import generated

    from inventory_ai.models import Warehouse

    app = create_app(config_for_tests(url))
    with app.app_context():
        flask_migrate.upgrade()
        started = time.perf_counter()
        stock_totals = migration_0017()
        rng = random.Random(37)
        now = datetime.now().replace(microsecond=0)
        warehouses: list[int] = []
        term_table = ""
        made = 0
        # The seeded bakery keeps its own stock (seeding runs with the triggers); the generated
        # materials get theirs here.
        for rows, terms in generated(size, batch=20_000):
            if not warehouses:
                warehouses = list(db.session.scalars(select(Warehouse.id).order_by(Warehouse.id)))
                db.session.commit()
                with_migration_ops(stock_totals.drop_triggers)
                term_table = terms_before(kind)
            for row in rows:
                row["created_at"] = row["updated_at"] = now
            levels, moves = stock_rows(range(rows[0]["id"], rows[-1]["id"] + 1), warehouses, below, rng, now)
            bulk_dicts(kind, "materials", rows)
            bulk_insert(kind, term_table, TERM_COLUMNS, terms)
            bulk_dicts(kind, "stock_levels", levels)
            bulk_dicts(kind, "stock_movements", moves)
            db.session.commit()
            made += len(rows)
            if made % 100_000 < len(rows):
                print(f"  {made:,} generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)

        terms_after(kind)

        def backfill():
            db.session.execute(text("DELETE FROM stock_totals"))
            stock_totals.backfill()
            stock_totals.create_triggers()

        with_migration_ops(backfill)
        if kind == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))
        else:
            db.session.execute(text("ANALYZE"))
            db.session.commit()
        print(
            f"  filled {size:,} materials with stock in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )


# --- measuring -------------------------------------------------------------------------------


def timed(fn, repeat: int, budget: float) -> tuple[list[float], object]:
    """Wall-clock ms per call; CPU_MS gets this process's CPU ms per call (on a shared machine the
    wall clock waits for other people's work, the CPU time does not; on SQLite it is the whole cost)."""
    started = time.perf_counter()
    last = fn()  # warm-up
    out: list[float] = []
    CPU_MS.clear()
    spent = time.perf_counter() - started
    while len(out) < repeat and (spent * (len(out) + 2) < budget * (len(out) + 1) or len(out) < 2):
        t0, c0 = time.perf_counter(), time.process_time()
        last = fn()
        out.append((time.perf_counter() - t0) * 1000)
        CPU_MS.append((time.process_time() - c0) * 1000)
        spent += out[-1] / 1000
        if spent > budget and len(out) >= 2:
            break
    return out, last


CPU_MS: list[float] = []


def tool_cases(session, size: int) -> list[tuple[str, str, dict]]:
    from inventory_ai.models import Material

    middle = session.scalar(select(Material.code).order_by(Material.id).offset(size // 2).limit(1))
    return [
        ("search_materials", "面粉", {"keyword": "面粉"}),
        ("search_materials", "flour in stock", {"keyword": "flour", "in_stock": True}),
        ("get_material_detail", middle, {"material": middle}),
        ("get_inventory_stats", "all", {}),
        ("get_inventory_stats", "one warehouse", {"warehouse": "主仓库"}),
        ("get_inventory_stats", "one category", {"category": "面粉类"}),
        ("list_low_stock", "all", {}),
        ("list_low_stock", "one warehouse", {"warehouse": "主仓库"}),
        ("list_low_stock", "one category", {"category": "面粉类"}),
        ("get_stock_movements", "30 days", {}),
        ("get_stock_movements", "one material", {"material": middle, "days": 366}),
        (
            "format_report",
            "20 rows",
            {"title": "低库存", "rows": [{"code": f"M{i:07d}", "quantity": str(i)} for i in range(20)]},
        ),
    ]


def direct(manager, user, name: str, arguments: dict):
    def call():
        result = manager.call_directly(db.session, user, name, arguments)
        db.session.commit()
        if result.status != "success":
            return result.content[:160]
        return None

    return call


def executed(manager, user, name: str, arguments):
    from inventory_ai.assistant.tools.base import ToolContext
    from inventory_ai.models.base import new_call_id
    from inventory_ai.services import sites

    tool = manager.registry.get(name)

    def call():
        session = db.session
        context = ToolContext(
            user_id=user.id, username=user.username, role=user.role, session=session,
            engine=db.engine, request_id=None, conversation_id="", message_id="",
            language="zh", tool_names=manager.registry.names(), tool_call_id=new_call_id(),
            sites=sites.of_user(session, user),
        )  # fmt: skip
        tool.execute(arguments() if callable(arguments) else arguments, context)
        session.commit()

    return call


def write_cases(session, size: int):
    from inventory_ai.models import Material

    code = session.scalar(select(Material.code).order_by(Material.id).offset(size // 3).limit(1))
    turn = iter(range(10**9))

    def booking():  # in and out in turn, so the level stays where it was
        kind = "inbound" if next(turn) % 2 == 0 else "outbound"
        return {
            "movement_type": kind,
            "material": code,
            "warehouse": "主仓库",
            "quantity": 1,
            "reason": "bench",
        }

    return [
        ("record_stock_movement", "in/out 1 kg", booking),
        ("create_purchase_request", code, {"material": code, "quantity": 5, "note": "bench"}),
    ]


PAGES = [
    ("page", "overview", "/overview"),
    ("page", "approvals", "/approvals"),
    ("page", "history (conversation list)", "/conversation-list"),
    ("admin list", "materials", "/api/v1/admin/materials"),
    ("admin list", "materials, page 100", "/api/v1/admin/materials?page=100"),
    ("admin list", "stock levels", "/api/v1/admin/stock/levels"),
    ("admin list", "stock levels, one warehouse", "/api/v1/admin/stock/levels?warehouse=WH01"),
    ("admin list", "stock movements", "/api/v1/admin/stock/movements"),
    ("admin list", "purchase requests", "/api/v1/admin/purchase-requests"),
    ("admin list", "audit events", "/api/v1/admin/audit-events"),
    ("admin list", "conversations", "/api/v1/admin/conversations"),
    ("admin list", "users", "/api/v1/admin/users"),
]


# The same tools as a user who works in the cold store only (seeded: coldstore, WH02).
SCOPED_CASES = [
    ("search_materials", "面粉, WH02 user", {"keyword": "面粉"}),
    ("search_materials", "flour in stock, WH02 user", {"keyword": "flour", "in_stock": True}),
    ("get_inventory_stats", "all, WH02 user", {}),
    ("list_low_stock", "all, WH02 user", {}),
    ("get_stock_movements", "30 days, WH02 user", {}),
]


def deep_pages(session, size: int) -> list[tuple[str, str, str]]:
    """The deepest page by number (pages by number end where the total stops counting: COUNT_CAP
    rows) and the middle of the materials and of the ledger by cursor (`after`)."""
    from inventory_ai.api.admin.catalog import BY_CODE, LATEST_MOVEMENTS
    from inventory_ai.api.admin.common import COUNT_CAP
    from inventory_ai.models import Material, StockMovement

    deepest = min(COUNT_CAP, size) // 50  # the last page by number that starts within COUNT_CAP
    middle_row = size // 2 - 1
    middle = session.scalar(select(Material).order_by(Material.code).offset(middle_row).limit(1))
    moved = session.scalar(
        select(StockMovement)
        .order_by(StockMovement.created_at.desc(), StockMovement.id.desc())
        .offset(middle_row)
        .limit(1)
    )
    return [
        ("admin list", f"materials, page {deepest:,} (offset)", f"/api/v1/admin/materials?page={deepest}"),
        (
            "admin list",
            f"materials, row {middle_row + 2:,} on by `after`",
            f"/api/v1/admin/materials?after={BY_CODE.cursor(middle)}",
        ),
        (
            "admin list",
            f"stock movements, page {deepest:,} (offset)",
            f"/api/v1/admin/stock/movements?page={deepest}",
        ),
        (
            "admin list",
            f"stock movements, row {middle_row + 2:,} on by `after`",
            f"/api/v1/admin/stock/movements?after={LATEST_MOVEMENTS.cursor(moved)}",
        ),
    ]


def row(kind: str, size: int, what: str, case: str, times: list[float], note) -> None:
    note_text = f" ({note})" if note else ""
    print(
        f"| {kind} | {size:,} | {what} | {case}{note_text} | {len(times)} | "
        f"{percentile(times, 50):.1f} | {percentile(times, 95):.1f} | {percentile(CPU_MS, 50):.1f} |",
        flush=True,
    )


def do_measure(kind: str, url: str, size: int, repeat: int, budget: float) -> None:
    from inventory_ai.assistant.extension import manager as the_manager
    from inventory_ai.models import User

    app = create_app(config_for_tests(url))
    app.config["WTF_CSRF_ENABLED"] = False
    with app.app_context():
        manager = the_manager()
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        purchaser = db.session.scalar(select(User).where(User.username == "purchaser"))
        for name, case, arguments in tool_cases(db.session, size):
            times, note = timed(direct(manager, admin, name, arguments), repeat, budget)
            row(kind, size, name, case, times, note)
        for name, case, arguments in write_cases(db.session, size):
            user = purchaser if name == "create_purchase_request" else admin
            times, note = timed(executed(manager, user, name, arguments), repeat, budget)
            row(kind, size, name, case, times, note)
        coldstore = db.session.scalar(select(User).where(User.username == "coldstore"))
        for name, case, arguments in SCOPED_CASES:
            times, note = timed(direct(manager, coldstore, name, arguments), repeat, budget)
            row(kind, size, name, case, times, note)
        pages = PAGES + deep_pages(db.session, size)
        db.session.remove()
    client = app.test_client()
    login = client.post("/api/v1/auth/login", json={"username": "admin", "password": "bench-password"})
    assert login.status_code == 200, login.get_data(as_text=True)
    for what, case, path in pages:

        def get(path=path):
            response = client.get(path)
            return None if response.status_code == 200 else f"HTTP {response.status_code}"

        times, note = timed(get, repeat, budget)
        row(kind, size, what, case, times, note)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"| {kind} | {size:,} | worker memory | peak RSS of this process | 1 | {peak:.0f} MB | |", flush=True
    )


def main() -> None:
    logging.disable(logging.INFO)
    args = sys.argv[1:]
    if args and args[0] in ("--fill", "--measure"):
        step, kind, url, size, extra = args[0], args[1], args[2], int(args[3]), json.loads(args[4])
        os.chdir(tempfile.mkdtemp())
        if step == "--fill":
            do_fill(kind, url, size, extra["below"])
        else:
            do_measure(kind, url, size, extra["repeat"], extra["budget"])
        return
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return
    if args[0] not in ("sqlite", "postgresql"):
        # else taken for a database kind: anything but "sqlite" dropped and refilled inv_scale_<size>
        sys.exit(f"unknown database {args[0]!r}: sqlite or postgresql")
    kind = args.pop(0)

    def option(name: str, default):
        if name in args:
            value = args.pop(args.index(name) + 1)
            args.remove(name)
            return type(default)(value)
        return default

    below = option("--below", 0.9)
    repeat = option("--repeat", 15)
    budget = option("--budget", 20.0)
    reuse = option("--reuse", "")
    sizes = [int(s) for s in args] or [10_000]
    if reuse:
        sizes = [int(reuse.rsplit("_", 1)[-1].removesuffix(".db"))]
    print("| database | materials | what | case | calls | p50 ms | p95 ms | CPU p50 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        if reuse:
            url = f"sqlite:///{reuse}" if kind == "sqlite" else pg_url(size)
        else:
            url = fresh_database(kind, size)
            subprocess.run(
                [sys.executable, str(HERE), "--fill", kind, url, str(size), json.dumps({"below": below})],
                check=True,
            )
            if kind == "sqlite":
                print(f"  (database kept at {url})", file=sys.stderr)
        extra = json.dumps({"repeat": repeat, "budget": budget})
        subprocess.run([sys.executable, str(HERE), "--measure", kind, url, str(size), extra], check=True)


if __name__ == "__main__":
    main()
