"""Four eyes on large bookings: who must get a second person's sign-off, who may give it, and what
waits for it. A booking worth more than the threshold (quantity x unit cost, CNY), requested by
someone who is not a manager or an admin, waits after its requester approves; a manager or admin
who is not the requester decides; undecided, it expires.
"""

from __future__ import annotations

from datetime import UTC, timedelta
from decimal import Decimal

from sqlalchemy import select, update
from sqlalchemy.orm import Session, joinedload

from inventory_ai import strict_json
from inventory_ai.errors import Forbidden
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Role,
    Signoff,
    SignoffStatus,
    ToolCallRecord,
    User,
    utcnow,
)
from inventory_ai.services import sites as site_rules
from inventory_ai.services.sites import Sites

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


def waiting(session: Session, limit: int = 100, *, sites: Sites) -> list[Signoff]:
    """What waits for a sign-off in the signer's warehouses (`sites`: both ends of a transfer),
    oldest first (expired ones are ended by the caller first)."""
    found = session.scalars(
        select(Signoff)
        .options(joinedload(Signoff.call))
        .where(Signoff.status == SignoffStatus.WAITING)
        .order_by(Signoff.created_at)
    )
    return [s for s in found if within(session, s, sites)][:limit]


def within(session: Session, signoff: Signoff, sites: Sites) -> bool:
    """Is the booking waiting for this sign-off in `sites` (both ends of a transfer)?"""
    call = signoff.call
    arguments = strict_json.loads_or_text(call.approved_arguments or call.arguments)
    return site_rules.booking_within(session, sites, arguments if isinstance(arguments, dict) else {})


def expired(session: Session, message_id: str | None = None) -> list[Signoff]:
    """Sign-offs still waiting past their time (of this answer, or of any)."""
    query = select(Signoff).where(Signoff.status == SignoffStatus.WAITING, Signoff.expires_at <= utcnow())
    if message_id is not None:
        query = query.where(Signoff.message_id == message_id)
    return list(session.scalars(query))


def of_call(session: Session, call_id: str) -> Signoff | None:
    return session.scalar(
        select(Signoff)
        .join(Signoff.call)
        .where(ToolCallRecord.call_id == call_id)
        .options(joinedload(Signoff.call))
    )


def outcomes(session: Session, message: ChatMessage) -> list[dict]:
    """The sign-offs of an answer's bookings, in call order: {tool_call_id, decision (waiting |
    approved | rejected | expired | withdrawn), by (username; None for one that expired), at
    (when it was decided, UTC ISO 8601), reason}. Only a booking its requester approved can wait
    for a sign-off: an answer without one costs no query."""
    calls = [c for r in message.rounds for c in r.calls]
    if not any(c.decided_by_id is not None or c.status == CallStatus.AWAITING_SIGNOFF for c in calls):
        return []
    found = {s.call_id: s for s in session.scalars(select(Signoff).where(Signoff.message_id == message.id))}
    if not found:
        return []
    names = dict(
        session.execute(
            select(User.id, User.username).where(User.id.in_({s.decided_by_id for s in found.values()}))
        ).all()
    )
    return [
        {
            "tool_call_id": c.call_id,
            "decision": s.status,
            "by": names.get(s.decided_by_id),
            "at": s.decided_at.replace(tzinfo=UTC).isoformat() if s.decided_at else None,
            "reason": s.reason,
        }
        for c in calls
        if (s := found.get(c.id)) is not None
    ]


def latest_outcome(outcomes_of_answer: list[dict]) -> dict | None:
    """The answer's sign-off as one outcome: the one decided last, None while none is decided."""
    decided = [o for o in outcomes_of_answer if o["decision"] != SignoffStatus.WAITING]
    if not decided:
        return None
    last = max(decided, key=lambda o: o["at"] or "")
    return {key: last[key] for key in ("decision", "by", "at", "reason")}


# What marks a conversation in the requester's sidebar: a booking there waits, or an outcome they
# have not seen yet (one they withdrew themselves they have seen).
MARKED = (SignoffStatus.APPROVED.value, SignoffStatus.REJECTED.value, SignoffStatus.EXPIRED.value)


def marks(session: Session, conversation_ids: list[str]) -> dict[str, str]:
    """conversation id -> "waiting" (a booking there waits for a sign-off), else the newest outcome
    not seen yet ("approved", "rejected", "expired"); conversations with neither are left out."""
    if not conversation_ids:
        return {}
    rows = session.execute(
        select(ChatMessage.conversation_id, Signoff.status, Signoff.decided_at)
        .join(ChatMessage, ChatMessage.id == Signoff.message_id)
        .where(
            ChatMessage.conversation_id.in_(conversation_ids),
            (Signoff.status == SignoffStatus.WAITING) | (Signoff.seen_at.is_(None)),
        )
        .order_by(Signoff.decided_at)
    ).all()
    out: dict[str, str] = {}
    for conversation_id, status, _decided_at in rows:
        if out.get(conversation_id) == SignoffStatus.WAITING:
            continue
        if status == SignoffStatus.WAITING or status in MARKED:
            out[conversation_id] = status
    return out


def seen(session: Session, conversation_id: str) -> bool:
    """The requester opened the conversation: its outcomes are seen (the caller commits)."""
    unseen = (
        select(Signoff.id)
        .join(ChatMessage, ChatMessage.id == Signoff.message_id)
        .where(
            ChatMessage.conversation_id == conversation_id,
            Signoff.status != SignoffStatus.WAITING,
            Signoff.seen_at.is_(None),
        )
    )
    ids = list(session.scalars(unseen))
    if ids:
        session.execute(
            update(Signoff).where(Signoff.id.in_(ids)).values(seen_at=utcnow()),
            execution_options={"synchronize_session": False},
        )
    return bool(ids)
