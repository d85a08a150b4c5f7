"""Pagination and shared schemas for the admin API."""

from __future__ import annotations

from flask_login import current_user
from marshmallow import Schema, fields, validate
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.auth import authenticated_user
from inventory_ai.errors import error_response
from inventory_ai.extensions import db
from inventory_ai.services import audit


def admins_only(blueprint) -> None:
    """Every route of the blueprint: 401 without credentials, 403 for anyone but an admin."""

    @blueprint.before_request
    def _check():
        if not current_user.is_authenticated:
            return error_response(401, "unauthorized", "log in or send a valid Bearer token")
        if not current_user.is_admin:
            return error_response(403, "forbidden", "admins only")
        return None


class PageArgs(Schema):
    # Query strings are text, so these convert; JSON bodies use strict=True fields.
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    per_page = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))


def page_of(schema_cls):
    """A response schema {"items": [...], "page", "per_page", "total"} for items of schema_cls."""

    class PageSchema(Schema):
        items = fields.List(fields.Nested(schema_cls))
        page = fields.Integer()
        per_page = fields.Integer()
        total = fields.Integer(metadata={"description": f"exact up to {COUNT_CAP:,}; beyond, {COUNT_CAP:,}"})
        total_capped = fields.Boolean(metadata={"description": f"there are more than {COUNT_CAP:,}"})

    PageSchema.__name__ = f"{schema_cls.__name__.removesuffix('Schema')}PageSchema"
    return PageSchema


# A list's total is counted up to this many rows: an exact count(*) of a million rows is a scan on
# PostgreSQL (about 200 ms at a million materials), and nobody pages through 10,000 rows.
COUNT_CAP = 10_000


def paginate(session: Session, stmt, args: dict, count=None) -> dict:
    """A page of stmt, and its total up to COUNT_CAP. `count` (a select of the same rows) counts more
    cheaply where it can (without the join the order needs: stock levels joined to their materials)."""
    rows = (count if count is not None else stmt.order_by(None)).limit(COUNT_CAP + 1)
    total = session.scalar(select(func.count()).select_from(rows.subquery()))
    page, per_page = args.get("page", 1), args.get("per_page", 50)
    items = session.scalars(stmt.limit(per_page).offset((page - 1) * per_page)).all()
    return {
        "items": items,
        "page": page,
        "per_page": per_page,
        "total": min(total, COUNT_CAP),
        "total_capped": total > COUNT_CAP,
    }


def admin_action(action: str, subject: str, change: dict | None = None) -> None:
    """An admin's change, in the audit trail (in the request's transaction)."""
    admin = authenticated_user()
    audit.record(
        db.session,
        action,
        "success",
        user_id=admin.id,
        role=admin.role,
        arguments={"subject": subject, **(change or {})},
    )
