"""The `effect` of a waiting booking as the API shows it (assistant/effects.py computes it)."""

from __future__ import annotations

from marshmallow import Schema, fields


class WarehouseEffectSchema(Schema):
    warehouse = fields.String(metadata={"description": "warehouse code"})
    name = fields.String()
    name_en = fields.String()
    before = fields.String(metadata={"description": "the level now, in `unit`"})
    after = fields.String(metadata={"description": "the level once booked (below zero: it would be refused)"})
    below_reorder_point = fields.Boolean()


class EffectSchema(Schema):
    """What a waiting booking would do to the stock if it were booked now (computed when shown)."""

    material = fields.String()
    unit = fields.String()
    reorder_point = fields.String()
    value_cny = fields.String(allow_none=True)
    warehouses = fields.List(fields.Nested(WarehouseEffectSchema))
    flags = fields.List(
        fields.String(), metadata={"description": "below_reorder_point_after, refused_negative"}
    )
