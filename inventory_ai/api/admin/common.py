"""Pagination and shared schemas for the admin API."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from flask_login import current_user
from marshmallow import Schema, ValidationError, fields, validate, validates_schema
from sqlalchemy import and_, func, select, tuple_
from sqlalchemy.orm import Session

from inventory_ai.auth import authenticated_user
from inventory_ai.errors import InvalidInput, error_response
from inventory_ai.extensions import db
from inventory_ai.services import audit
from inventory_ai.text import is_storable


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
    page = fields.Integer(
        validate=validate.Range(min=1, max=100_000),
        metadata={"description": "from 1; a page starting beyond the first 10,000 rows is 422: use `after`"},
    )
    per_page = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))
    after = fields.String(
        validate=validate.Length(min=1, max=500),
        metadata={
            "description": "the `next` of the page before: the rows after it, however deep (not with `page`)"
        },
    )

    @validates_schema
    def _one_way(self, data, **_kwargs):
        if "page" in data and "after" in data:
            raise ValidationError("page by `page` or by `after`, not both", "after")


def page_of(schema_cls):
    """A response schema {"items": [...], "page", "per_page", "total"} for items of schema_cls."""

    class PageSchema(Schema):
        items = fields.List(fields.Nested(schema_cls))
        page = fields.Integer(allow_none=True, metadata={"description": "null when paged by `after`"})
        per_page = fields.Integer()
        total = fields.Integer(metadata={"description": f"exact up to {COUNT_CAP:,}; beyond, {COUNT_CAP:,}"})
        total_capped = fields.Boolean(metadata={"description": f"there are more than {COUNT_CAP:,}"})
        next = fields.String(
            allow_none=True, metadata={"description": "pass as `after` for the next page; null on the last"}
        )

    PageSchema.__name__ = f"{schema_cls.__name__.removesuffix('Schema')}PageSchema"
    return PageSchema


# A list's total is counted up to this many rows: an exact count(*) of a million rows is a scan on
# PostgreSQL (about 200 ms at a million materials), and nobody pages through 10,000 rows.
COUNT_CAP = 10_000


@dataclass(frozen=True)
class Order:
    """A list's order, one row after another with no ties: its columns (all ascending or all
    descending), and how to read their values off a listed item (for the `next` cursor)."""

    columns: tuple
    descending: bool
    values: Callable[[object], tuple]

    def clauses(self) -> list:
        return [c.desc() if self.descending else c for c in self.columns]

    def beyond(self, values: tuple):
        """The rows after `values` in this order. The first column's own bound lets an index on it
        alone serve the range (a row comparison is not always matched to such an index)."""
        first, row = self.columns[0], tuple_(*self.columns)
        if self.descending:
            return and_(first <= values[0], row < values)
        return and_(first >= values[0], row > values)

    def cursor(self, item) -> str:
        values = [v.isoformat() if isinstance(v, datetime) else v for v in self.values(item)]
        return base64.urlsafe_b64encode(json.dumps(values, ensure_ascii=False).encode()).decode().rstrip("=")

    def read(self, cursor: str) -> tuple:
        """The values a cursor carries, typed as its columns; a cursor not made here is refused."""
        try:
            values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            if not isinstance(values, list) or len(values) != len(self.columns):
                raise ValueError
            return tuple(_typed(c, v) for c, v in zip(self.columns, values, strict=True))
        except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
            raise InvalidInput(
                "`after` is not a cursor of this list: pass a page's `next` as it is"
            ) from None


BIGINT = 2**63  # a cursor's integer beyond a database integer is no row's key


def _typed(column, value):
    """A cursor's value as its column takes it; ValueError for any the database could not take
    (an integer past 64 bits, text no column can store: a NUL, a lone surrogate)."""
    kind = column.type.python_type
    if kind is datetime:
        return datetime.fromisoformat(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError
    if isinstance(value, int) and not -BIGINT <= value < BIGINT:
        raise ValueError
    if isinstance(value, str) and not is_storable(value):
        raise ValueError
    return value


def paginate(session: Session, stmt, args: dict, order: Order, count=None) -> dict:
    """A page of stmt in `order`, by `page` (an offset: page n skips the n - 1 before it) or `after`
    (a cursor: an index range from the last row shown, as cheap at row 900,000 as at row 50), and its
    total up to COUNT_CAP. `count` (a select of the same rows) counts more cheaply where it can
    (without the join the order needs: stock levels joined to their materials)."""
    rows = (count if count is not None else stmt).limit(COUNT_CAP + 1)
    total = session.scalar(select(func.count()).select_from(rows.subquery()))
    per_page = args.get("per_page", 50)
    listed = stmt.order_by(*order.clauses())
    if "after" in args:
        page = None
        listed = listed.where(order.beyond(order.read(args["after"])))
    else:
        page = args.get("page", 1)
        if (page - 1) * per_page >= COUNT_CAP:
            # An offset is read and skipped row by row (half a second for page 10,001 of the ledger
            # at a million rows): pages by number reach as far as the total counts, `after` beyond.
            raise InvalidInput(
                f"page {page} starts beyond the first {COUNT_CAP:,} rows: page on by `after` "
                "(each page's `next`), which is as quick at any depth"
            )
        listed = listed.offset((page - 1) * per_page)
    # One row more than the page: whether there is a next page, without counting.
    items = session.scalars(listed.limit(per_page + 1)).all()
    more = len(items) > per_page
    items = items[:per_page]
    return {
        "items": items,
        "page": page,
        "per_page": per_page,
        "total": min(total, COUNT_CAP),
        "total_capped": total > COUNT_CAP,
        "next": order.cursor(items[-1]) if more else None,
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
