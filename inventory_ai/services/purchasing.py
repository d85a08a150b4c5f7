"""Purchase requests: raised by managers and purchasers (or the assistant on their behalf)."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.models import PurchaseRequest, PurchaseRequestStatus, User, utcnow
from inventory_ai.services import clock
from inventory_ai.services.catalog import find_material
from inventory_ai.services.units import convert, fmt_quantity, parse_quantity


def create_purchase_request(
    session: Session,
    user: User,
    material_ref: str,
    quantity,
    unit: str | None = None,
    needed_by: str | date | None = None,
    note: str | None = None,
) -> PurchaseRequest:
    begin_write(session)
    material = find_material(session, material_ref)
    amount = convert(parse_quantity(quantity), unit, material.unit)
    if amount <= 0:
        raise InvalidInput(f"quantity must be positive, got {fmt_quantity(amount)}")
    due = None
    if needed_by:
        try:
            due = needed_by if isinstance(needed_by, date) else date.fromisoformat(str(needed_by))
        except ValueError as exc:
            raise InvalidInput(f"needed_by must be a date such as 2026-12-01, got {needed_by!r}") from exc
        if due < clock.today():  # the plant's day: a date people say
            raise InvalidInput(f"needed_by {due.isoformat()} is in the past")
    request = PurchaseRequest(
        material_id=material.id,
        quantity=amount,
        needed_by=due,
        note=(note or "").strip()[:2000] or None,
        requested_by_id=user.id,
    )
    session.add(request)
    session.commit()
    return request


def decide(session: Session, request_id: int, approve: bool, user: User) -> PurchaseRequest:
    begin_write(session)
    request = session.get(PurchaseRequest, request_id)
    if request is None:
        raise NotFound(f"no purchase request {request_id}")
    if request.status != PurchaseRequestStatus.PENDING:
        raise Conflict(f"purchase request {request_id} is already {request.status}")
    request.status = (PurchaseRequestStatus.APPROVED if approve else PurchaseRequestStatus.REJECTED).value
    request.decided_by_id = user.id
    request.decided_at = utcnow()
    session.commit()
    return request


def pending_for(session: Session, material_id: int) -> list[PurchaseRequest]:
    return list(
        session.scalars(
            select(PurchaseRequest).where(
                PurchaseRequest.material_id == material_id,
                PurchaseRequest.status == PurchaseRequestStatus.PENDING,
            )
        )
    )
