"""A tool's JSON Schema, what the model sees, generated from the marshmallow schema that checks
the same fields (as flask-smorest's apispec generates the API's): a field's rules are written once.

The model is shown what it needs to write a valid call, and no more (every token counts against
the tool definitions' budget, docs/benchmarks.md): the type, the allowed values, the lower
bounds, a description, and the length limit of free text (`metadata={"free_text": True}`). The
upper bounds of names and codes only guard the database: a name too long is in no catalogue."""

from __future__ import annotations

from decimal import Decimal

from marshmallow import Schema, fields, validate

from inventory_ai.services.bookings import Quantity


def model_parameters(schema: Schema) -> dict:
    """The JSON Schema of a tool's arguments: an object of the schema's loadable fields."""
    properties: dict[str, dict] = {}
    required: list[str] = []
    for name, field in schema.fields.items():
        if field.dump_only:
            continue
        properties[name] = _property(field)
        if field.required:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _property(field: fields.Field) -> dict:
    rules = field.validators
    choices = next((v.choices for v in rules if isinstance(v, validate.OneOf)), None)
    if choices is not None:
        shown: dict = {"enum": list(choices)}
    elif isinstance(field, Quantity):
        shown = {"type": "number", "minimum": _number(field.minimum)}
    elif isinstance(field, fields.String):
        shown = {"type": "string"}
    else:
        raise TypeError(f"no JSON Schema for a {type(field).__name__} field yet")
    length = next((v for v in rules if isinstance(v, validate.Length)), None)
    if length is not None and length.min:
        shown["minLength"] = length.min
    if length is not None and length.max is not None and field.metadata.get("free_text"):
        shown["maxLength"] = length.max
    if "description" in field.metadata:
        shown["description"] = field.metadata["description"]
    return shown


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)
