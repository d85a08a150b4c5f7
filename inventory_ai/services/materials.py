"""Writing materials: one place for the rules, and the search index kept in step with every write."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.models import CatalogAlias, Category, Material, Supplier
from inventory_ai.services.search_index import index_material, synonyms_of
from inventory_ai.services.stock_totals import lock_for_material_change
from inventory_ai.services.units import MAX_QUANTITY, checked_decimal

UNITS = ("kg", "g", "L", "mL", "pcs")
MATERIAL_CODE = re.compile(r"^[A-Z][A-Z0-9-]{1,31}$")  # checked after upper-casing
# The same rule as the API documents it, before the code is upper-cased.
MATERIAL_CODE_AS_TYPED = MATERIAL_CODE.pattern.replace("[A-Z]", "[A-Za-z]").replace(
    "[A-Z0-9-]", "[A-Za-z0-9-]"
)
# Decimals each column keeps (models.base QUANTITY, MONEY).
PLACES = {"reorder_point": 3, "unit_cost": 4}
# What the stock triggers (migration 0017) read of a material: changing one moves its stock shares.
STOCK_FIELDS = {"reorder_point", "unit_cost", "category_id", "active"}
FIELDS = (
    "code", "name_zh", "name_en", "unit", "spec", "category", "supplier", "reorder_point", "unit_cost",
    "description", "synonyms",
)  # fmt: skip
MAX_SYNONYMS = 30


@dataclass
class RowError:
    row: int
    field: str
    message: str


def _decimal(value: Any, field: str, errors: list[RowError], row: int) -> Decimal | None:
    try:
        return checked_decimal(value, field, PLACES[field], MAX_QUANTITY)
    except InvalidInput as exc:
        errors.append(RowError(row, field, exc.message))
        return None


def validate_fields(
    session: Session, data: dict[str, Any], row: int = 0, partial: bool = False
) -> tuple[dict, list[RowError]]:
    """Checked values for a material, or every problem found (all of them, not just the first)."""
    errors: list[RowError] = []
    clean: dict[str, Any] = {}
    for field in FIELDS:
        if (
            field not in data
            or data[field] is None
            or (isinstance(data[field], str) and not data[field].strip())
        ):
            if not partial and field in ("code", "name_zh", "name_en", "unit", "category"):
                errors.append(RowError(row, field, "is required"))
            continue
        value = data[field].strip() if isinstance(data[field], str) else data[field]
        if field == "code":
            if not MATERIAL_CODE.match(str(value).upper()):
                errors.append(RowError(row, field, "use capital letters, digits and -, e.g. M155"))
            clean["code"] = str(value).upper()
        elif field in ("name_zh", "name_en", "spec", "description", "synonyms"):
            clean[field] = _text(field, value, errors, row)
        elif field == "unit":
            if value not in UNITS:
                errors.append(RowError(row, field, f"must be one of {', '.join(UNITS)}"))
            clean["unit"] = value
        elif field == "category":
            category = session.scalar(
                select(Category).where(
                    (Category.code == str(value).upper())
                    | (Category.name_zh == value)
                    | (Category.name_en == value)
                )
            )
            if category is None:
                errors.append(RowError(row, field, f"no category {value!r}"))
            clean["category_id"] = category.id if category else None
        elif field == "supplier":
            supplier = session.scalar(
                select(Supplier).where(
                    (Supplier.code == str(value).upper())
                    | (Supplier.name_zh == value)
                    | (Supplier.name_en == value)
                )
            )
            if supplier is None:
                errors.append(RowError(row, field, f"no supplier {value!r}"))
            clean["supplier_id"] = supplier.id if supplier else None
        else:
            clean[field] = _decimal(value, field, errors, row)
    if "name_en" in clean:
        clean["name_en_key"] = clean["name_en"].lower()
    return clean, errors


def _text(field: str, value: Any, errors: list[RowError], row: int) -> str | list[str]:
    if field == "synonyms":
        return _synonyms(value, errors, row)
    if field == "description" and (len(str(value)) > 300 or "\n" in str(value)):
        errors.append(RowError(row, field, "one line of at most 300 characters"))
    elif field != "description" and len(str(value)) > 200:
        errors.append(RowError(row, field, "at most 200 characters"))
    return str(value)


def _synonyms(value: Any, errors: list[RowError], row: int) -> list[str]:
    """Other names: a list, or in a CSV cell separated by | (a comma belongs to the CSV)."""
    names = value.split("|") if isinstance(value, str) else list(value)
    clean = list(dict.fromkeys(str(n).strip().lower() for n in names if str(n).strip()))
    if len(clean) > MAX_SYNONYMS or any(len(n) > 100 for n in clean):
        errors.append(RowError(row, "synonyms", f"at most {MAX_SYNONYMS} names of at most 100 characters"))
    return clean


def _set_synonyms(session: Session, code: str, synonyms: list[str]) -> None:
    """A material's other names are its rows in catalog_aliases (read by search and the offline
    assistant's linking): replaced as a whole."""
    session.query(CatalogAlias).filter(CatalogAlias.kind == "material", CatalogAlias.code == code).delete()
    session.add_all(CatalogAlias(kind="material", code=code, alias=name) for name in synonyms)
    session.flush()


def synonyms(session: Session, material: Material) -> list[str]:
    return synonyms_of(session, [material.code]).get(material.code, [])


def _raise(errors: list[RowError]) -> None:
    if errors:
        raise InvalidInput(
            "; ".join(f"{e.field}: {e.message}" for e in errors),
            {"fields": {e.field: e.message for e in errors}},
        )


def get_material(session: Session, code: str) -> Material:
    material = session.scalar(select(Material).where(Material.code == code.upper()))
    if material is None:
        raise NotFound(f"no material {code!r}")
    return material


def create_material(session: Session, data: dict[str, Any]) -> Material:
    begin_write(session)
    clean, errors = validate_fields(session, data)
    _raise(errors)
    if session.scalar(select(Material.id).where(Material.code == clean["code"])) is not None:
        raise Conflict(f"material code {clean['code']} already exists")
    other_names = clean.pop("synonyms", None)
    material = Material(**clean)
    session.add(material)
    session.flush()
    if other_names is not None:
        _set_synonyms(session, material.code, other_names)
    index_material(session, material)
    session.commit()
    return material


def update_material(session: Session, code: str, data: dict[str, Any]) -> Material:
    begin_write(session)
    material = get_material(session, code)
    if "code" in data and data["code"] and data["code"].upper() != material.code:
        raise InvalidInput("a material's code cannot change: the ledger refers to it")
    clean, errors = validate_fields(session, {k: v for k, v in data.items() if k != "code"}, partial=True)
    _raise(errors)
    if STOCK_FIELDS & (clean.keys() | data.keys()):  # the stock triggers will move its shares
        lock_for_material_change(
            session, material.id, {material.category_id, clean.get("category_id") or material.category_id}
        )
    if (other_names := clean.pop("synonyms", None)) is not None:
        _set_synonyms(session, material.code, other_names)
    for key, value in clean.items():
        setattr(material, key, value)
    if "active" in data:
        material.active = bool(data["active"])
    session.flush()
    session.refresh(material)
    index_material(session, material)
    session.commit()
    return material


def deactivate_material(session: Session, code: str) -> Material:
    """Materials are never deleted: the ledger keeps referring to them. They stop being found."""
    begin_write(session)
    material = get_material(session, code)
    lock_for_material_change(session, material.id, {material.category_id})
    material.active = False
    session.commit()
    return material


def _check_header(header: list[str]) -> None:
    """Every required column, each named once: a duplicated column would be read from its last
    copy, silently."""
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InvalidInput(f"the CSV header names a column twice: {', '.join(repeated)}", {"header": header})
    missing = {"code", "name_zh", "name_en", "unit", "category"} - set(header)
    if missing:
        raise InvalidInput(f"the CSV header lacks: {', '.join(sorted(missing))}", {"header": header})


# Rows written per write transaction: SQLite has one writer at a time, and a chat waiting behind an
# import waits for one batch, not the whole file (100 rows and their search terms: under 0.9 s on a 2-core machine at load 12).
BATCH_ROWS = 100


def import_csv(session: Session, text: str) -> list[str]:
    """Every row is checked first, holding no write lock (reads only), and any problem imports
    nothing; then the rows are written in batches of BATCH_ROWS, each its own short write. Returns
    the codes imported."""
    header, rows = _read_csv(text)
    cleaned = _checked_rows(session, header, rows)
    session.commit()  # the checks' read transaction ends: the writes start afresh
    return _write_in_batches(session, cleaned)


def _read_csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        _check_header(header)
        rows = list(reader)
    except csv.Error as exc:  # e.g. a field past the csv module's size limit
        line = reader.line_num + 1  # the line being read when it failed
        raise InvalidInput(f"the CSV cannot be read at line {line}: {exc}", {"line": line}) from None
    if not rows:
        raise InvalidInput("the CSV has no rows")
    if len(rows) > 10_000:
        raise InvalidInput("at most 10000 rows per import")
    return list(header), rows


def _checked_rows(session: Session, header: list[str], rows: list[dict]) -> list[dict]:
    errors: list[RowError] = [
        RowError(number, "(row)", f"{len(row[None])} field(s) more than the header's {len(header)} columns")
        for number, row in enumerate(rows, start=2)
        if row.get(None)  # csv.DictReader keeps a row's extra fields under None
    ]
    cleaned: list[dict] = []
    seen: dict[str, int] = {}
    # Only the codes this file names are looked up: the catalogue may hold a million.
    named = list({str(row.get("code") or "").strip().upper() for row in rows} - {""})
    existing = {
        code
        for start in range(0, len(named), 500)
        for code in session.scalars(
            select(Material.code).where(Material.code.in_(named[start : start + 500]))
        )
    }
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        clean, row_errors = validate_fields(session, row, row=number)
        errors += row_errors
        code = clean.get("code")
        if code in existing:
            errors.append(RowError(number, "code", f"{code} already exists"))
        elif code in seen:
            errors.append(RowError(number, "code", f"{code} repeats line {seen[code]}"))
        elif code:
            seen[code] = number
        cleaned.append(clean)
    if errors:
        session.rollback()
        raise InvalidInput(
            f"{len(errors)} problem(s) in {len({e.row for e in errors})} row(s); nothing was imported",
            {"rows": [{"line": e.row, "field": e.field, "message": e.message} for e in errors]},
        )
    return cleaned


def _write_in_batches(session: Session, cleaned: list[dict]) -> list[str]:
    imported: list[str] = []
    for start in range(0, len(cleaned), BATCH_ROWS):
        batch = cleaned[start : start + BATCH_ROWS]
        begin_write(session)
        taken = sorted(
            session.scalars(select(Material.code).where(Material.code.in_([c["code"] for c in batch])))
        )
        if taken:  # created by someone else since the check: stop here, and say what was imported
            session.rollback()
            raise Conflict(
                f"{', '.join(taken[:10])} were created meanwhile; the {len(imported)} rows before "
                "them were imported, the rest not",
                {"imported": imported, "created_meanwhile": taken},
            )
        other_names = [clean.get("synonyms") for clean in batch]
        materials = [Material(**{k: v for k, v in clean.items() if k != "synonyms"}) for clean in batch]
        session.add_all(materials)
        session.flush()
        for material, names in zip(materials, other_names, strict=True):
            if names:
                _set_synonyms(session, material.code, names)
            index_material(session, material)
        imported += [m.code for m in materials]
        session.commit()
    return imported
