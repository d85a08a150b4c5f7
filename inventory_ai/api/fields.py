"""Field types shared by the API schemas."""

from __future__ import annotations

from datetime import UTC, datetime

from marshmallow import Schema, fields, pre_load, validate

from inventory_ai.errors import DomainError, InvalidInput

# An OpenTelemetry trace id as the API shows and filters it: 32 lower-case hex digits.
TRACE_ID = r"^[0-9a-f]{32}$"


class UtcDateTime(fields.AwareDateTime):
    """Timestamps are stored as naive UTC; the API says so (RFC 3339 with an offset)."""

    def __init__(self, **kwargs):
        super().__init__(format="iso", default_timezone=UTC, **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return super()._serialize(value, attr, obj, **kwargs)


def to_naive_utc(value: datetime) -> datetime:
    """A filter's time in the database's terms: aware times are converted, naive ones are UTC.
    A time whose UTC falls outside the years 1-9999 (9999-12-31T23:59:59-12:00) is refused (422),
    never an OverflowError (500)."""
    if value.tzinfo is None:
        return value
    try:
        return value.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        raise InvalidInput(
            f"the time {value.isoformat()} is outside the years 1-9999 once converted to UTC; "
            "give a time within them"
        ) from None


def decimal_string(places: int, **kwargs) -> fields.Decimal:
    """Quantities and money go out as strings ("12.500"): exact, where a JSON number is a float."""
    metadata = {"type": "string", "format": "decimal", **kwargs.pop("metadata", {})}
    return fields.Decimal(as_string=True, places=places, metadata=metadata, **kwargs)


class DecisionRequired(DomainError):
    code = "decision_required"
    http_status = 400


class ExplicitDecision(Schema):
    """A body that decides about a booking: `decision` is approve or reject, said in so many words.
    Without it the request is refused (400), never read as an approval."""

    decision = fields.String(required=True, validate=validate.OneOf(["approve", "reject"]))

    @pre_load
    def _decision_said(self, data, **kwargs):
        if isinstance(data, dict) and data.get("decision") in (None, ""):
            raise DecisionRequired('say "decision": "approve" or "reject"; a decision is never assumed')
        return data
