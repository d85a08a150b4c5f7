"""Admin: materials (CRUD, CSV import), stock levels and movements, purchase requests."""

from __future__ import annotations

import re
from dataclasses import replace

from flask import g, request
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select
from sqlalchemy.orm import contains_eager, selectinload

from inventory_ai.api.admin.common import Order, PageArgs, admins_only, page_of, paginate
from inventory_ai.api.fields import TRACE_ID, UtcDateTime, decimal_string, to_naive_utc
from inventory_ai.auth import authenticated_user
from inventory_ai.errors import InvalidInput
from inventory_ai.extensions import db
from inventory_ai.models import MOVEMENT_TYPES, Material, PurchaseRequest, StockLevel, StockMovement
from inventory_ai.services import bookings, ledger, materials, purchasing, stats
from inventory_ai.services.bookings import BookingSchema, DecimalIn
from inventory_ai.services.catalog import find_category, find_material
from inventory_ai.services.materials import MATERIAL_CODE_AS_TYPED, UNITS
from inventory_ai.services.search_index import synonyms_of
from inventory_ai.services.sites import find_warehouse

# A client's key, stored in the caller's own namespace (ledger.client_key: api:<user>/<key>): no
# character the ledger uses to build keys (the "/" after the user, the "#in" of a transfer's row).
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._:-]{1,100}")

blp = Blueprint(
    "admin_catalog", __name__, url_prefix="/api/v1/admin", description="Admin: materials and stock"
)
admins_only(blp)


def _synonyms(material: Material) -> list[str]:
    """A listed page's synonyms were read at once (Materials.get); one material's, alone."""
    listed = g.get("listed_synonyms")
    if listed is not None and material.code in listed:
        return listed[material.code]
    return materials.synonyms(db.session, material)


class MaterialSchema(Schema):
    code = fields.String(dump_only=True)
    name_zh = fields.String()
    name_en = fields.String()
    unit = fields.String()
    spec = fields.String(allow_none=True)
    description = fields.String(allow_none=True)
    synonyms = fields.Function(lambda m: _synonyms(m))
    category = fields.Function(lambda m: m.category.code if m.category else None)
    supplier = fields.Function(lambda m: m.supplier.code if m.supplier else None)
    reorder_point = decimal_string(3)
    unit_cost = decimal_string(4)
    active = fields.Boolean()


class MaterialCreateSchema(Schema):
    code = fields.String(
        required=True,
        validate=validate.Length(min=2, max=32),
        metadata={"pattern": MATERIAL_CODE_AS_TYPED},
    )
    name_zh = fields.String(required=True, validate=validate.Length(min=1, max=200))
    name_en = fields.String(required=True, validate=validate.Length(min=1, max=200))
    unit = fields.String(required=True, validate=validate.OneOf(UNITS))
    spec = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=200))
    description = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=300))
    synonyms = fields.List(fields.String(validate=validate.Length(min=1, max=100)), load_default=None)
    category = fields.String(required=True, validate=validate.Length(min=1, max=100))
    supplier = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=200))
    reorder_point = DecimalIn(3, load_default=0)
    unit_cost = DecimalIn(4, load_default=0)


class MaterialUpdateSchema(Schema):
    name_zh = fields.String(validate=validate.Length(min=1, max=200))
    name_en = fields.String(validate=validate.Length(min=1, max=200))
    unit = fields.String(validate=validate.OneOf(UNITS))
    spec = fields.String(allow_none=True, validate=validate.Length(max=200))
    description = fields.String(allow_none=True, validate=validate.Length(max=300))
    synonyms = fields.List(fields.String(validate=validate.Length(min=1, max=100)))
    category = fields.String(validate=validate.Length(min=1, max=100))
    supplier = fields.String(allow_none=True, validate=validate.Length(max=200))
    reorder_point = DecimalIn(3)
    unit_cost = DecimalIn(4)
    active = fields.Boolean()


class MaterialQuery(PageArgs):
    category = fields.String(validate=validate.Length(max=100))
    active = fields.Boolean()


class ImportResultSchema(Schema):
    imported = fields.Integer()
    codes = fields.List(fields.String())


BY_CODE = Order((Material.code,), False, lambda m: (m.code,))


@blp.route("/materials")
class Materials(MethodView):
    @blp.arguments(MaterialQuery, location="query")
    @blp.response(200, page_of(MaterialSchema))
    def get(self, args):
        stmt = select(Material).options(selectinload(Material.category), selectinload(Material.supplier))
        if "category" in args:
            stmt = stmt.where(Material.category_id == find_category(db.session, args["category"]).id)
        if "active" in args:
            stmt = stmt.where(Material.active.is_(args["active"]))
        page = paginate(db.session, stmt, args, BY_CODE)
        # One query for the page's synonyms, not one per material.
        codes = [m.code for m in page["items"]]
        found = synonyms_of(db.session, codes)
        g.listed_synonyms = {code: found.get(code, []) for code in codes}
        return page

    @blp.arguments(MaterialCreateSchema)
    @blp.response(201, MaterialSchema)
    @blp.alt_response(409, description="the code exists already")
    def post(self, body):
        return materials.create_material(db.session, body)


@blp.route("/materials/<code>")
class MaterialResource(MethodView):
    @blp.response(200, MaterialSchema)
    def get(self, code):
        return materials.get_material(db.session, code)

    @blp.arguments(MaterialUpdateSchema)
    @blp.response(200, MaterialSchema)
    def patch(self, body, code):
        return materials.update_material(db.session, code, body)

    @blp.response(200, MaterialSchema)
    def delete(self, code):
        """Deactivate: the ledger keeps referring to the material, so it is never removed."""
        return materials.deactivate_material(db.session, code)


@blp.route("/materials/import")
class MaterialImport(MethodView):
    @blp.response(201, ImportResultSchema)
    @blp.doc(
        requestBody={"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}},
        description="CSV with header code,name_zh,name_en,unit,spec,category,supplier,reorder_point,unit_cost "
        "and optionally description (one line) and synonyms (other names separated by |). "
        "Every row is checked; any error imports nothing and lists every problem by line.",
    )
    def post(self):
        upload = request.files.get("file")
        raw = upload.read() if upload else request.get_data()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidInput("the CSV must be UTF-8") from exc
        codes = materials.import_csv(db.session, text)
        return {"imported": len(codes), "codes": codes}


# --- stock -----------------------------------------------------------------------------------


class LevelSchema(Schema):
    material = fields.Function(lambda lv: lv.material.code)
    name = fields.Function(lambda lv: lv.material.name_zh)
    warehouse = fields.Function(lambda lv: lv.warehouse.code)
    quantity = decimal_string(3)
    unit = fields.Function(lambda lv: lv.material.unit)


class LevelQuery(PageArgs):
    material = fields.String(validate=validate.Length(max=200))
    warehouse = fields.String(validate=validate.Length(max=100))


class MovementSchema(Schema):
    id = fields.Integer()
    material = fields.Function(lambda mv: mv.material.code)
    warehouse = fields.Function(lambda mv: mv.warehouse.code)
    counterpart_warehouse = fields.Function(
        lambda mv: mv.counterpart_warehouse.code if mv.counterpart_warehouse else None
    )
    movement_type = fields.String()
    quantity = decimal_string(3)
    level_before = decimal_string(3)
    level_after = decimal_string(3)
    reason = fields.String()
    user_id = fields.Integer(allow_none=True)
    created_at = UtcDateTime()
    trace_id = fields.String(
        allow_none=True,
        metadata={"description": "the OpenTelemetry trace of the decision or request that booked it"},
    )


class MovementQuery(PageArgs):
    material = fields.String(validate=validate.Length(max=200))
    warehouse = fields.String(validate=validate.Length(max=100))
    movement_type = fields.String(validate=validate.OneOf(MOVEMENT_TYPES))
    trace_id = fields.String(validate=validate.Regexp(TRACE_ID))
    since = fields.DateTime()
    until = fields.DateTime()


class BookingResultSchema(Schema):
    movement_id = fields.Integer()
    material = fields.String()
    movement_type = fields.String()
    warehouse = fields.String()
    quantity = fields.String()
    unit = fields.String()
    level_before = fields.String()
    level_after = fields.String()
    to_warehouse = fields.String()
    to_level_after = fields.String()
    replayed = fields.Boolean()


LEVEL_ORDER = Order(
    (Material.code, StockLevel.warehouse_id), False, lambda level: (level.material.code, level.warehouse_id)
)
LATEST_MOVEMENTS = Order((StockMovement.created_at, StockMovement.id), True, lambda m: (m.created_at, m.id))
LATEST_REQUESTS = Order(
    (PurchaseRequest.created_at, PurchaseRequest.id), True, lambda r: (r.created_at, r.id)
)


@blp.route("/stock/levels")
class Levels(MethodView):
    @blp.arguments(LevelQuery, location="query")
    @blp.response(200, page_of(LevelSchema))
    def get(self, args):
        where = []
        if "material" in args:
            where.append(StockLevel.material_id == find_material(db.session, args["material"]).id)
        if "warehouse" in args:
            where.append(StockLevel.warehouse_id == find_warehouse(db.session, args["warehouse"]).id)
        stmt = (
            select(StockLevel)
            .join(Material)
            .where(*where)
            .options(contains_eager(StockLevel.material), selectinload(StockLevel.warehouse))
        )
        # Every level has its material (a foreign key): counted without the join.
        return paginate(db.session, stmt, args, LEVEL_ORDER, select(StockLevel.id).where(*where))


@blp.route("/stock/movements")
class Movements(MethodView):
    @blp.arguments(MovementQuery, location="query")
    @blp.response(200, page_of(MovementSchema))
    def get(self, args):
        stmt = select(StockMovement).options(*stats.MOVEMENT_NAMES)
        if "material" in args:
            stmt = stmt.where(StockMovement.material_id == find_material(db.session, args["material"]).id)
        if "warehouse" in args:
            stmt = stmt.where(StockMovement.warehouse_id == find_warehouse(db.session, args["warehouse"]).id)
        if "movement_type" in args:
            stmt = stmt.where(StockMovement.movement_type == args["movement_type"])
        if "trace_id" in args:
            stmt = stmt.where(StockMovement.trace_id == args["trace_id"])
        if "since" in args:
            stmt = stmt.where(StockMovement.created_at >= to_naive_utc(args["since"]))
        if "until" in args:
            stmt = stmt.where(StockMovement.created_at < to_naive_utc(args["until"]))
        return paginate(db.session, stmt, args, LATEST_MOVEMENTS)

    @blp.arguments(BookingSchema)
    @blp.response(201, BookingResultSchema)
    @blp.doc(
        parameters=[
            {
                "in": "header",
                "name": "Idempotency-Key",
                "schema": {"type": "string", "maxLength": 100, "pattern": IDEMPOTENCY_KEY.pattern},
            }
        ]
    )
    def post(self, body):
        """Book a movement through the same ledger as the assistant; a repeated Idempotency-Key books once."""
        key = request.headers.get("Idempotency-Key")
        if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
            raise InvalidInput("Idempotency-Key must be 1-100 letters, digits and . _ : -")
        db.session.commit()  # the ledger writes on its own connection: let go of the request's lock
        user_id = authenticated_user().id
        booking = bookings.for_caller(body, user_id, ledger.client_key(user_id, key) if key else None)
        if key:  # a retry of a booking made before keys were per caller still finds it
            booking = replace(booking, legacy_key=ledger.legacy_client_key(key))
        return ledger.book(db.engine, booking).as_dict()


# --- purchase requests -----------------------------------------------------------------------


class PurchaseRequestSchema(Schema):
    id = fields.Integer()
    material = fields.Function(lambda r: r.material.code)
    quantity = decimal_string(3)
    unit = fields.Function(lambda r: r.material.unit)
    needed_by = fields.Date(allow_none=True)
    note = fields.String(allow_none=True)
    status = fields.String()
    requested_by_id = fields.Integer()
    decided_by_id = fields.Integer(allow_none=True)
    created_at = UtcDateTime()
    decided_at = UtcDateTime(allow_none=True)


class PurchaseQuery(PageArgs):
    status = fields.String(validate=validate.OneOf(["pending", "approved", "rejected"]))


@blp.route("/purchase-requests")
class PurchaseRequests(MethodView):
    @blp.arguments(PurchaseQuery, location="query")
    @blp.response(200, page_of(PurchaseRequestSchema))
    def get(self, args):
        stmt = select(PurchaseRequest)
        if "status" in args:
            stmt = stmt.where(PurchaseRequest.status == args["status"])
        return paginate(db.session, stmt, args, LATEST_REQUESTS)


@blp.route("/purchase-requests/<int:request_id>/approve")
class Approve(MethodView):
    @blp.response(200, PurchaseRequestSchema)
    def post(self, request_id):
        return purchasing.decide(db.session, request_id, True, authenticated_user())


@blp.route("/purchase-requests/<int:request_id>/reject")
class Reject(MethodView):
    @blp.response(200, PurchaseRequestSchema)
    def post(self, request_id):
        return purchasing.decide(db.session, request_id, False, authenticated_user())
