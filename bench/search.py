"""Material search at scale: p50/p95 per query class beside a naive LIKE '%q%' scan.

    .venv/bin/python bench/search.py sqlite 10000 100000
    .venv/bin/python bench/search.py postgresql 10000 100000     # needs 127.0.0.1:5432 (trust)
    .venv/bin/python bench/search.py sqlite --reuse DIR 1000000   # query a database filled earlier
    .venv/bin/python bench/search.py postgresql --reuse - 1000000  # query iai_bench_search_1000000
    .venv/bin/python bench/search.py postgresql --scope WH02 --url URL 1000000  # as a WH02-only user

With `--scope CODES` (comma-separated warehouse codes) each query runs as a user limited to those
warehouses (services/sites.py), plain and with `in_stock` (stock held there): on a database with
stock, such as bench/scale.py's (`--url` names it; nothing is filled), instead of the LIKE baseline.

For each size a fresh database is migrated and filled with generated materials (the seeded bakery's
names combined with brand prefixes and pack sizes, so every query class has many matches), indexed
with the same code the app uses, and queried: each query class runs several queries, each 15 times.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from decimal import Decimal

import flask_migrate
from _common import percentile
from sqlalchemy import create_engine, func, insert, or_, select, text

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import Category, Material, MaterialSearchTerm, Supplier
from inventory_ai.services.search import search_materials
from inventory_ai.services.search_index import NAME, material_terms
from inventory_ai.services.seeding import seed

BRANDS = [
    ("金像", "Golden Statue"),
    ("王后", "Queen"),
    ("新良", "Xinliang"),
    ("香满园", "Fragrant Garden"),
    ("安琪", "Angel"),
    ("总统", "President"),
    ("铁塔", "Tower"),
    ("维益", "Rich"),
    ("南侨", "Namchow"),
    ("嘉利宝", "Callebaut"),
    ("法芙娜", "Valrhona"),
    ("百钻", "Baizuan"),
    ("展艺", "Zhanyi"),
    ("德馨", "Dexin"),
    ("舒可曼", "Sugarman"),
    ("太古", "Taikoo"),
    ("伊利", "Yili"),
    ("蒙牛", "Mengniu"),
    ("光明", "Bright"),
    ("恒天然", "Fonterra"),
]
PACKS = ["1kg", "5kg", "10kg", "20kg", "25kg", "500g"]
QUERIES = {
    "1-char 汉字": ["糖", "粉", "油", "蛋"],
    "2-char 汉字": ["面粉", "黄油", "奶粉", "巧克"],
    "pinyin": ["mianfen", "huangyou", "tang", "mf"],
    "English word": ["flour", "butter", "sugar", "chocolate"],
    "English prefix": ["flo", "but", "choc", "sug"],
    "code prefix": ["M00012", "M0005", "M01", "M1"],
}


def database_url(kind: str, size: int) -> str:
    if kind == "sqlite":
        folder = tempfile.mkdtemp(prefix="iai-search-")
        return f"sqlite:///{folder}/search_{size}.db"
    name = f"iai_bench_search_{size}"
    admin = create_engine(
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres", isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


MATERIAL_COLUMNS = (
    "id", "code", "name_zh", "name_en", "name_en_key", "unit", "spec",
    "category_id", "supplier_id", "reorder_point", "unit_cost", "active",
)  # fmt: skip


def generated(size: int, batch: int = 5000):
    """Seed the bakery, then yield the generated materials in batches: (material rows as dicts keyed
    by column, search-term rows as (term, field, material_id) tuples)."""
    session = db.session
    # Names repeat every len(base) x 20 brands x 6 packs materials: their terms are worked out once
    # per name (the code's own term is added per material), which makes the fill ~10x faster.
    known_terms: dict[tuple, set] = {}
    seed(session, "bench-password")
    base = session.scalars(select(Material).order_by(Material.id)).all()
    categories = {c.id: c for c in session.scalars(select(Category))}
    suppliers = {s.id: s for s in session.scalars(select(Supplier))}
    next_id = session.scalar(select(func.max(Material.id))) + 1
    session.commit()
    made = len(base)
    while made < size:
        rows, terms = [], []
        for _ in range(min(batch, size - made)):
            template = base[made % len(base)]
            brand_zh, brand_en = BRANDS[(made // len(base)) % len(BRANDS)]
            pack = PACKS[(made // (len(base) * len(BRANDS))) % len(PACKS)]
            m = Material(
                id=next_id,
                code=f"M{next_id:07d}",
                name_zh=f"{brand_zh}{template.name_zh}{pack}",
                name_en=f"{brand_en} {template.name_en} {pack}",
                unit=template.unit,
                spec=template.spec,
                category_id=template.category_id,
                supplier_id=template.supplier_id,
                reorder_point=Decimal(10),
                unit_cost=template.unit_cost,
                active=True,
            )
            m.name_en_key = m.name_en.lower()
            rows.append({c: getattr(m, c) for c in MATERIAL_COLUMNS})
            shape = (m.name_zh, m.name_en, m.spec, m.category_id, m.supplier_id)
            if shape not in known_terms:
                code = m.code
                m.code = ""
                named = material_terms(m, categories[m.category_id], suppliers.get(m.supplier_id))
                known_terms[shape] = named - {("", NAME)}
                m.code = code
            terms += [(t, f, next_id) for t, f in known_terms[shape]]
            terms.append((m.code.lower(), NAME, next_id))
            next_id += 1
            made += 1
        yield rows, terms


def fill(size: int, analyze: bool = True) -> None:
    session = db.session
    started = time.perf_counter()
    for rows, terms in generated(size):
        session.execute(insert(Material), rows)
        session.execute(
            insert(MaterialSearchTerm), [{"term": t, "field": f, "material_id": i} for t, f, i in terms]
        )
        session.commit()
    if not analyze:
        return
    if db.engine.dialect.name == "postgresql":
        # The steady state autovacuum leaves: statistics, and a visibility map for index-only scans.
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    else:
        session.execute(text("ANALYZE"))
        session.commit()
    print(f"  filled {size} materials in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def like_baseline(session, q: str) -> None:
    pattern = f"%{q}%"
    condition = or_(
        Material.name_zh.like(pattern),
        Material.name_en_key.like(pattern.lower()),
        Material.code.like(pattern.upper()),
    )
    session.scalar(select(func.count()).select_from(Material).where(condition))
    session.scalars(select(Material.id).where(condition).order_by(Material.code).limit(10)).all()


CPU_MS: list[float] = []  # this process's CPU ms per call, beside the wall clock


def time_it(fn, repeat: int = 15) -> list[float]:
    """Wall-clock ms per call; CPU_MS gets the process's CPU ms of each (on a shared machine the
    wall clock waits for other people's work, the CPU time does not; on SQLite it is the whole cost)."""
    fn()  # warm the cache
    out = []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - started) * 1000)
        CPU_MS.append((time.process_time() - cpu) * 1000)
    return out


def scoped(size: int, kind: str, codes: list[str]) -> None:
    """Each query class as a user limited to `codes`: the plain search, and stock held there."""
    from inventory_ai.services.search import SearchFilters
    from inventory_ai.services.sites import of_codes

    within = of_codes(db.session, codes)
    for label, queries in QUERIES.items():
        plain, stocked, plain_cpu = [], [], []
        for q in queries:
            CPU_MS.clear()
            plain += time_it(
                lambda q=q: search_materials(db.session, q, SearchFilters(sites=within), limit=10)
            )
            plain_cpu += CPU_MS
            CPU_MS.clear()
            stocked += time_it(
                lambda q=q: search_materials(
                    db.session, q, SearchFilters(sites=within, in_stock=True), limit=10
                )
            )
        print(
            f"| {kind} | {size:,} | {label} | {percentile(plain, 50):.1f} | {percentile(plain, 95):.1f} "
            f"| {percentile(stocked, 50):.1f} | {percentile(stocked, 95):.1f} "
            f"| {percentile(plain_cpu, 50):.1f} / {percentile(plain_cpu, 95):.1f} "
            f"| {percentile(CPU_MS, 50):.1f} / {percentile(CPU_MS, 95):.1f} |",
            flush=True,
        )


def main() -> None:
    logging.disable(logging.INFO)
    args = sys.argv[1:]
    kind = args.pop(0)

    def option(name: str):
        if name not in args:
            return None
        value = args.pop(args.index(name) + 1)
        args.remove(name)
        return value

    reuse, scope, given_url = option("--reuse"), option("--scope"), option("--url")
    sizes = [int(s) for s in args] or [10_000]
    os.chdir(tempfile.mkdtemp())
    if scope:
        print(
            f"| database | materials | query class ({scope} only) | p50 ms | p95 ms | in stock p50 ms "
            "| in stock p95 ms | CPU p50 / p95 ms | in stock CPU p50 / p95 ms |"
        )
    else:
        print(
            "| database | materials | query class | index p50 ms | index p95 ms | LIKE p50 ms | LIKE p95 ms |"
        )
    print("|---|---|---|---|---|---|---|" + ("---|---|" if scope else ""))
    for size in sizes:
        if given_url:
            url = given_url
        elif reuse:
            url = (
                f"sqlite:///{reuse}/search_{size}.db"
                if kind == "sqlite"
                else f"postgresql+psycopg://postgres@127.0.0.1:5432/iai_bench_search_{size}"
            )
        else:
            url = database_url(kind, size)
        app = create_app(config_for_tests(url))
        with app.app_context():
            if scope:
                scoped(size, kind, scope.split(","))
                db.session.remove()
                db.engine.dispose()
                continue
            if not reuse and not given_url:
                flask_migrate.upgrade()
                fill(size)
            for label, queries in QUERIES.items():
                ours, naive = [], []
                for q in queries:
                    ours += time_it(lambda q=q: search_materials(db.session, q, limit=10))
                    naive += time_it(lambda q=q: like_baseline(db.session, q))
                print(
                    f"| {kind} | {size:,} | {label} | {percentile(ours, 50):.1f} | {percentile(ours, 95):.1f} "
                    f"| {percentile(naive, 50):.1f} | {percentile(naive, 95):.1f} |",
                    flush=True,
                )
            db.session.remove()
            db.engine.dispose()


if __name__ == "__main__":
    main()
