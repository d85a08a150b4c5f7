"""Four eyes on large bookings: who must get a second person's sign-off, who may give it, and what
waits for it. A booking worth more than the threshold (quantity x unit cost, CNY), requested by
someone who is not a manager or an admin, waits after its requester approves; a manager or admin
who is not the requester decides; undecided, it expires.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from inventory_ai.errors import Forbidden
from inventory_ai.models import Role, Signoff, SignoffStatus, ToolCallRecord, User, utcnow

SIGNERS = frozenset({Role.WAREHOUSE_MANAGER.value, Role.ADMIN.value})


def needs_signoff(role: str, value: Decimal | None, threshold: Decimal) -> bool:
    return value is not None and value > threshold and role not in SIGNERS


def may_sign(signer: User, requested_by_id: int) -> None:
    """Raise Forbidden unless this person may sign off a booking that user requested."""
    if signer.role not in SIGNERS:
        raise Forbidden("only a warehouse manager or an admin signs off bookings")
    if signer.id == requested_by_id:
        raise Forbidden("nobody signs off their own booking: another manager or admin must")


def request(
    session: Session, record: ToolCallRecord, message_id: str, user: User, value: Decimal, hours: float
):
    signoff = Signoff(
        call=record,
        message_id=message_id,
        requested_by_id=user.id,
        value_cny=value,
        expires_at=utcnow() + timedelta(hours=hours),
    )
    session.add(signoff)
    return signoff


def waiting(session: Session, limit: int = 100) -> list[Signoff]:
    """What waits for a sign-off, oldest first (expired ones are ended by the caller first)."""
    return list(
        session.scalars(
            select(Signoff)
            .options(joinedload(Signoff.call))
            .where(Signoff.status == SignoffStatus.WAITING)
            .order_by(Signoff.created_at)
            .limit(limit)
        )
    )


def expired(session: Session) -> list[Signoff]:
    return list(
        session.scalars(
            select(Signoff).where(Signoff.status == SignoffStatus.WAITING, Signoff.expires_at <= utcnow())
        )
    )


def of_call(session: Session, call_id: str) -> Signoff | None:
    return session.scalar(
        select(Signoff)
        .join(Signoff.call)
        .where(ToolCallRecord.call_id == call_id)
        .options(joinedload(Signoff.call))
    )
