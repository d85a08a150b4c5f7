"""Loads seed_data/ idempotently: existing rows are matched by their natural keys and left alone."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.models import (
    CatalogAlias,
    Category,
    Intent,
    Material,
    Role,
    StockLevel,
    StockMovement,
    Supplier,
    User,
    Warehouse,
)
from inventory_ai.services.search_index import index_material

SEED_DIR = Path(__file__).resolve().parent.parent.parent / "seed_data"
DEFAULT_DEMO_PASSWORD = "inventory-demo"
# (username, role, warehouses): the first four work everywhere (null); one scoped user per
# warehouse besides the main one, and a cold-store manager who signs off there only.
DEMO_USERS = [
    ("staff", Role.WAREHOUSE_STAFF, None),
    ("manager", Role.WAREHOUSE_MANAGER, None),
    ("purchaser", Role.PURCHASER, None),
    ("admin", Role.ADMIN, None),
    ("coldstore", Role.WAREHOUSE_STAFF, ["WH02"]),
    ("coldmanager", Role.WAREHOUSE_MANAGER, ["WH02"]),
    ("packaging", Role.WAREHOUSE_STAFF, ["WH03"]),
]


@dataclass
class SeedReport:
    created: dict[str, int]

    def __str__(self) -> str:
        parts = [f"{name}: {count}" for name, count in self.created.items()]
        return "created " + ", ".join(parts)


def _rows(name: str, seed_dir: Path):
    with (seed_dir / name).open(encoding="utf-8") as fh:
        yield from csv.DictReader(fh)


def seed(session: Session, demo_password: str, seed_dir: Path = SEED_DIR) -> SeedReport:
    created = {
        "warehouses": _seed_simple(session, Warehouse, _rows("warehouses.csv", seed_dir)),
        "categories": _seed_simple(session, Category, _rows("categories.csv", seed_dir)),
        "suppliers": _seed_simple(session, Supplier, _rows("suppliers.csv", seed_dir)),
    }
    session.flush()
    # Other names first: a material's synonyms are indexed with it.
    created["aliases"] = _seed_aliases(session, seed_dir)
    session.flush()
    created["materials"] = _seed_materials(session, seed_dir)
    session.flush()
    created["described"] = _seed_descriptions(session, seed_dir)
    created["movements"] = _seed_movements(session, seed_dir)
    created["intents"] = _seed_intents(session, seed_dir)
    created["users"] = _seed_users(session, demo_password)
    session.commit()
    return SeedReport(created)


def _seed_simple(session: Session, model, rows) -> int:
    existing = set(session.scalars(select(model.code)))
    new = [model(**row) for row in rows if row["code"] not in existing]
    session.add_all(new)
    return len(new)


def _seed_materials(session: Session, seed_dir: Path) -> int:
    existing = set(session.scalars(select(Material.code)))
    categories = {c.code: c for c in session.scalars(select(Category))}
    suppliers = {s.code: s for s in session.scalars(select(Supplier))}
    described = {row["code"]: row["description"].strip() for row in _material_texts(seed_dir)}
    count = 0
    for row in _rows("materials.csv", seed_dir):
        if row["code"] in existing:
            continue
        material = Material(
            code=row["code"],
            name_zh=row["name_zh"],
            name_en=row["name_en"],
            name_en_key=row["name_en"].lower(),
            unit=row["unit"],
            spec=row["spec"] or None,
            description=described.get(row["code"]) or None,
            category=categories[row["category"]],
            supplier=suppliers.get(row["supplier"]),
            reorder_point=Decimal(row["reorder_point"]),
            unit_cost=Decimal(row["unit_cost"]),
        )
        session.add(material)
        session.flush()
        index_material(session, material)
        count += 1
    return count


def _seed_movements(session: Session, seed_dir: Path) -> int:
    """Replays the seeded ledger; each row's key (seed:<line>) makes a second run skip it."""
    done = set(
        session.scalars(
            select(StockMovement.idempotency_key).where(StockMovement.idempotency_key.like("seed:%"))
        )
    )
    materials = {code: mid for code, mid in session.execute(select(Material.code, Material.id))}
    warehouses = {code: wid for code, wid in session.execute(select(Warehouse.code, Warehouse.id))}
    levels = {(lv.material_id, lv.warehouse_id): lv for lv in session.scalars(select(StockLevel))}
    count = 0
    for line, row in enumerate(_rows("stock_movements.csv", seed_dir), start=2):
        key = f"seed:{line}"
        if key in done:
            continue
        material_id, warehouse_id = materials[row["material"]], warehouses[row["warehouse"]]
        level = levels.get((material_id, warehouse_id))
        if level is None:
            level = StockLevel(material_id=material_id, warehouse_id=warehouse_id, quantity=Decimal(0))
            session.add(level)
            levels[(material_id, warehouse_id)] = level
        quantity = Decimal(row["quantity"])
        when = datetime.fromisoformat(row["date"]).replace(hour=9)
        session.add(
            StockMovement(
                material_id=material_id,
                warehouse_id=warehouse_id,
                counterpart_warehouse_id=warehouses.get(row["counterpart_warehouse"]),
                movement_type=row["movement_type"],
                quantity=quantity,
                level_before=level.quantity,
                level_after=level.quantity + quantity,
                reason=row["reason"],
                idempotency_key=key,
                created_at=when,
            )
        )
        level.quantity = level.quantity + quantity
        level.updated_at = when
        count += 1
    return count


def _seed_intents(session: Session, seed_dir: Path) -> int:
    existing = set(session.scalars(select(Intent.name)))
    items = json.loads((seed_dir / "intents.json").read_text(encoding="utf-8"))
    new = [Intent(**item) for item in items if item["name"] not in existing]
    session.add_all(new)
    return len(new)


def _material_texts(seed_dir: Path) -> list[dict]:
    """material_texts.csv: each seeded material's synonyms (separated by |) and description."""
    if not (seed_dir / "material_texts.csv").exists():
        return []
    return list(_rows("material_texts.csv", seed_dir))


def _seed_aliases(session: Session, seed_dir: Path) -> int:
    existing = set(session.execute(select(CatalogAlias.kind, CatalogAlias.alias, CatalogAlias.code)).tuples())
    rows = [(row["kind"], row["code"], row["alias"]) for row in _rows("aliases.csv", seed_dir)]
    rows += [
        ("material", row["code"], synonym.strip())
        for row in _material_texts(seed_dir)
        for synonym in row["synonyms"].split("|")
        if synonym.strip()
    ]
    new = []
    for kind, code, alias in rows:
        key = (kind, alias.lower(), code)
        if key not in existing:
            existing.add(key)
            new.append(CatalogAlias(kind=kind, code=code, alias=alias.lower()))
    session.add_all(new)
    return len(new)


def _seed_descriptions(session: Session, seed_dir: Path) -> int:
    """Descriptions for materials that have none yet (an admin's own text is kept), re-indexed."""
    texts = {row["code"]: row["description"].strip() for row in _material_texts(seed_dir)}
    count = 0
    for material in session.scalars(select(Material).where(Material.code.in_(list(texts)))):
        if not material.description and texts[material.code]:
            material.description = texts[material.code]
            session.flush()
            index_material(session, material)
            count += 1
    return count


def _seed_users(session: Session, password: str) -> int:
    existing = set(session.scalars(select(User.username)))
    count = 0
    for username, role, warehouses in DEMO_USERS:
        if username in existing:
            continue
        user = User(username=username, role=role.value, warehouses=warehouses)
        user.set_password(password)
        session.add(user)
        count += 1
    return count
