"""Writing materials: one place for the rules, and the search index kept in step with every write."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.models import CatalogAlias, Category, Material, Supplier
from inventory_ai.services.search import index_material, synonyms_of
from inventory_ai.services.units import MAX_QUANTITY

UNITS = ("kg", "g", "L", "mL", "pcs")
MATERIAL_CODE = re.compile(r"^[A-Z][A-Z0-9-]{1,31}$")  # checked after upper-casing
# The same rule as the API documents it, before the code is upper-cased.
MATERIAL_CODE_AS_TYPED = MATERIAL_CODE.pattern.replace("[A-Z]", "[A-Za-z]").replace(
    "[A-Z0-9-]", "[A-Za-z0-9-]"
)
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
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        errors.append(RowError(row, field, f"{value!r} is not a number"))
        return None
    if not number.is_finite() or number < 0 or number > MAX_QUANTITY:
        errors.append(RowError(row, field, "must be a number from 0 to 10^12"))
        return None
    return number


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
    material.active = False
    session.commit()
    return material


def import_csv(session: Session, text: str) -> list[Material]:
    """All rows or none: every row is checked first, and any error imports nothing."""
    begin_write(session)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        missing = {"code", "name_zh", "name_en", "unit", "category"} - set(header)
        if missing:
            raise InvalidInput(f"the CSV header lacks: {', '.join(sorted(missing))}", {"header": header})
        rows = list(reader)
    except csv.Error as exc:  # e.g. a field past the csv module's size limit
        line = reader.line_num + 1  # the line being read when it failed
        raise InvalidInput(f"the CSV cannot be read at line {line}: {exc}", {"line": line}) from None
    if not rows:
        raise InvalidInput("the CSV has no rows")
    if len(rows) > 10_000:
        raise InvalidInput("at most 10000 rows per import")
    errors: list[RowError] = []
    cleaned: list[dict] = []
    seen: dict[str, int] = {}
    existing = set(session.scalars(select(Material.code)))
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
    other_names = [clean.pop("synonyms", None) for clean in cleaned]
    materials = [Material(**clean) for clean in cleaned]
    session.add_all(materials)
    session.flush()
    for material, names in zip(materials, other_names, strict=True):
        if names:
            _set_synonyms(session, material.code, names)
        index_material(session, material)
    session.commit()
    return materials
