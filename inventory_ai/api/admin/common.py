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
        total = fields.Integer()

    PageSchema.__name__ = f"{schema_cls.__name__.removesuffix('Schema')}PageSchema"
    return PageSchema


def paginate(session: Session, stmt, args: dict, count=None) -> dict:
    """A page of stmt. `count` counts the same rows more cheaply where it can (without the join the
    order needs: a million stock levels are counted in milliseconds, joined to their materials in seconds)."""
    count = count if count is not None else select(func.count()).select_from(stmt.order_by(None).subquery())
    total = session.scalar(count)
    page, per_page = args.get("page", 1), args.get("per_page", 50)
    items = session.scalars(stmt.limit(per_page).offset((page - 1) * per_page)).all()
    return {"items": items, "page": page, "per_page": per_page, "total": total}


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
