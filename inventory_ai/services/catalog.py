"""Finding the things people name: materials by code or name, categories (a warehouse: sites.py)."""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from inventory_ai.errors import InvalidInput, NotFound
from inventory_ai.models import Category, Material
from inventory_ai.services.search import search_materials
from inventory_ai.services.search_index import normalise


def find_material(session: Session, ref: str) -> Material:
    """A material by code (M001), exact Chinese or English name, or an unambiguous search."""
    text = (ref or "").strip()
    if not text:
        raise InvalidInput("material is required: give a code such as M001 or a name such as 高筋面粉")
    key = normalise(text)
    material = session.scalar(
        select(Material).where(
            Material.active.is_(True),
            or_(Material.code == text.upper(), Material.name_zh == text, Material.name_en_key == key),
        )
    )
    if material is not None:
        return material
    page = search_materials(
        session, text, limit=5, described=False
    )  # a write names it; a description is searched
    if page.total == 1 and len(page.materials) == 1:
        return page.materials[0]
    if not page.materials:
        raise NotFound(f"no material matches {text!r}")
    options = ", ".join(f"{m.name_zh} ({m.code})" for m in page.materials)
    raise InvalidInput(
        f"{text!r} matches {page.total} materials; say which one: {options}",
        {"candidates": [m.code for m in page.materials]},
    )


def find_category(session: Session, ref: str) -> Category:
    text = (ref or "").strip()
    key = normalise(text)
    category = session.scalar(
        select(Category).where(
            or_(Category.code == text.upper(), Category.name_zh == text, func.lower(Category.name_en) == key)
        )
    )
    if category is None:
        names = ", ".join(c.name_zh for c in session.scalars(select(Category).order_by(Category.code)))
        raise NotFound(f"no category {text!r}; categories are: {names}")
    return category
