"""What people decide about the calls an answer paused for: approve (as asked or edited), reject
(with a reason), withdraw, and sign off large bookings as a second person.

Every decision first claims the answer with one conditional update (awaiting -> running, or
-> cancelled): of several at once exactly one wins, the rest are told 409. The
winner records who decided what on the calls, then hands the decision to the loop
(`ToolExecutionManager.resume`), which carries the calls out and resumes the answer, or has it wait
for a sign-off (assistant/signoff_rule.py, services/approvals.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from inventory_ai import strict_json
from inventory_ai.assistant import events as ev
from inventory_ai.assistant.answering import AnswerRef, Decision
from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.manager import ToolExecutionManager
from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.database import writing
from inventory_ai.errors import Conflict, Forbidden, InvalidInput, NotFound
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    Signoff,
    SignoffStatus,
    ToolCallRecord,
    User,
    utcnow,
)
from inventory_ai.services import approvals, audit, conversations, sites


class Decisions:
    def __init__(self, answers: ToolExecutionManager):
        self.answers = answers

    # --- the requester: approve or reject --------------------------------------------------------

    def prepare(
        self,
        session: Session,
        user: User,
        message_id: str,
        approve: bool,
        tool_call_id: str | None = None,
        arguments: dict | None = None,
        reason: str | None = None,
    ) -> Decision:
        """Check the decision (edited arguments are validated again: schema, permission, stock)
        and claim the answer for it."""
        with writing(session):
            message = locked(session, self.answers.own_message(session, user, message_id))
            if message.status != MessageStatus.AWAITING_CONFIRMATION:
                raise Conflict(
                    f"nothing is waiting for confirmation on this message (it is {message.status})"
                )
            calls = [c for r in message.rounds for c in r.calls]
            pending = [c for c in calls if c.status == CallStatus.PENDING_CONFIRMATION]
            if tool_call_id is not None:
                if not any(c.call_id == tool_call_id for c in calls):
                    raise NotFound(f"no call {tool_call_id!r} in this answer")
                pending = [c for c in pending if c.call_id == tool_call_id]
                if not pending:
                    raise Conflict(f"call {tool_call_id!r} was decided already")
            edited = {}
            if arguments is not None:
                if not approve:
                    raise InvalidInput("edited arguments come with an approval, not a rejection")
                if len(pending) != 1:
                    raise InvalidInput("say which call the edited arguments are for (tool_call_id)")
                edited[pending[0].call_id] = self._check_edit(session, user, message, pending[0], arguments)
            claim(session, message, MessageStatus.AWAITING_CONFIRMATION, MessageStatus.RUNNING)
            # Who decided what is on the records with the claim, before anything runs: a crash
            # after a booking cannot lose the decision it was made on.
            for record in pending:
                record.decided_by_id, record.decided_at, record.decision_reason = user.id, utcnow(), reason
                if record.call_id in edited:
                    arguments_now, record.description = edited[record.call_id]
                    record.approved_arguments = dumps(arguments_now)
            session.commit()
        answer = AnswerRef(message.conversation_id, message.id)
        edits = {call_id: arguments_now for call_id, (arguments_now, _text) in edited.items()}
        return Decision(answer, [c.call_id for c in pending], approve, user.id, reason, edits)

    def _check_edit(
        self, session: Session, user: User, message: ChatMessage, record: ToolCallRecord, edits: dict
    ) -> tuple[dict, str]:
        """The call as edited, checked like a new one, and the sentence that now describes it (what
        a second person signing off reads must be what was approved)."""
        tool = self.answers.registry.toolbox_for(user.role, session).get(record.name)
        if tool is None:
            raise Forbidden(f"tool {record.name!r} is no longer available to you")
        merged = {**json.loads(record.arguments), **edits}
        errors = self.answers.registry.argument_errors(record.name, merged)
        if errors:
            raise InvalidInput("the edited arguments are not valid: " + "; ".join(errors), {"errors": errors})
        context = ToolContext.of_answer(
            session, self.answers.engine(), user, message, tool_call_id=record.call_id
        )
        description = tool.describe_call(merged, context)  # names, permission, stock: refused now
        return merged, description

    def decide(self, session: Session, decision: Decision) -> Iterator[ev.Event]:
        """The claimed decision, carried out by the loop (`ToolExecutionManager.resume`)."""
        return self.answers.resume(session, decision)

    # --- a second person: sign-off -------------------------------------------------------------

    def prepare_signoff(
        self, session: Session, signer: User, tool_call_id: str, approve: bool, reason: str | None = None
    ) -> Decision:
        with writing(session):
            self.answers.recovery.expire_signoffs(session)
            signoff = approvals.of_call(session, tool_call_id)
            if signoff is None:
                raise NotFound(f"no booking {tool_call_id!r} waits for a sign-off")
            self._in_signers_sites(session, signer, signoff, tool_call_id)
            if signoff.status != SignoffStatus.WAITING:
                raise Conflict(f"this sign-off is {signoff.status} already")
            approvals.may_sign(signer, signoff.requested_by_id)
            message = locked(session, session.get(ChatMessage, signoff.message_id))
            if message.status != MessageStatus.AWAITING_SIGNOFF:
                raise Conflict("the requester has not finished deciding this answer yet")
            # The answer first, then its sign-off: the order a withdrawal locks them in (cancel).
            claim(session, message, MessageStatus.AWAITING_SIGNOFF, MessageStatus.RUNNING)
            decided = session.execute(
                update(Signoff)
                .where(Signoff.id == signoff.id, Signoff.status == SignoffStatus.WAITING)
                .values(
                    status=(SignoffStatus.APPROVED if approve else SignoffStatus.REJECTED).value,
                    decided_by_id=signer.id,
                    decided_at=utcnow(),
                    reason=reason,
                ),
                execution_options={"synchronize_session": False},
            )
            if decided.rowcount != 1:
                raise Conflict("another decision on this sign-off came first")
            audit.record(
                session, "signoff", "approved" if approve else "rejected", user_id=signer.id, role=signer.role,
                tool_name=signoff.call.name, conversation_id=message.conversation_id, message_id=message.id,
                arguments={"tool_call_id": tool_call_id, "reason": reason, "requested_by": signoff.requested_by_id},
            )  # fmt: skip
            session.commit()
        answer = AnswerRef(message.conversation_id, message.id)
        return Decision(answer, [tool_call_id], approve, signer.id, reason, signoff=True)

    def _in_signers_sites(self, session: Session, signer: User, signoff: Signoff, tool_call_id: str) -> None:
        """A booking outside the signer's warehouses is not theirs to see: 404, audited `denied`."""
        mine = sites.of_user(session, signer)
        if approvals.within(session, signoff, mine):
            return
        arguments = strict_json.loads_or_text(signoff.call.approved_arguments or signoff.call.arguments)
        outside = sites.first_outside(session, mine, arguments if isinstance(arguments, dict) else {})
        sites.record_denied(session, signer, "signoff", outside, arguments={"tool_call_id": tool_call_id})
        session.commit()  # the refusal stays on the record; nothing else was changed
        raise NotFound(f"no booking {tool_call_id!r} waits for a sign-off")

    # --- cancel --------------------------------------------------------------------------------

    def cancel(self, session: Session, user: User, message_id: str) -> ChatMessage:
        """Waiting for a decision or a sign-off: the cancel is that decision (if it wins the claim).
        Running: it stops at the next safe point; what was done by then stays done."""
        with writing(session):
            message = locked(session, self.answers.own_message(session, user, message_id))
            waiting = {
                MessageStatus.AWAITING_CONFIRMATION: (
                    CallStatus.PENDING_CONFIRMATION,
                    "cancelled by the user",
                ),
                MessageStatus.AWAITING_SIGNOFF: (CallStatus.AWAITING_SIGNOFF, "withdrawn by the requester"),
            }
            if message.status in waiting:
                call_status, why = waiting[MessageStatus(message.status)]
                if _withdrawn(session, message, user, call_status, why):
                    session.commit()
                    return message
                session.refresh(message)  # a decision came first: it is running now
            if message.status == MessageStatus.RUNNING:
                if being_carried_out(message):
                    raise Conflict(
                        "a decision on this answer came first and is being carried out: "
                        "what it books stands; the answer goes on"
                    )
                message.cancel_requested = True
                self.answers.note_cancel(message.id)
                session.commit()
            return message

    def withdraw_closed(self, session: Session, user: User) -> int:
        """Answers waiting for their owner's own confirmation in conversations closed to them (an
        admin took one of their warehouses away: services/conversations.open_to): nobody can reach
        them any more, so they end declined, nothing booked. Sign-offs in them are still decided."""
        with writing(session):
            closed = session.scalars(
                select(ChatMessage)
                .join(Conversation, ChatMessage.conversation_id == Conversation.id)
                .where(
                    Conversation.user_id == user.id,
                    ~conversations.open_to(session, user),
                    ChatMessage.status == MessageStatus.AWAITING_CONFIRMATION,
                )
            ).all()
            why = "withdrawn: the person's warehouses changed while it waited; nothing was booked"
            ended = sum(_withdrawn(session, m, user, CallStatus.PENDING_CONFIRMATION, why) for m in closed)
            session.commit()
        return ended


def _withdrawn(session: Session, message: ChatMessage, user: User, call_status: CallStatus, why: str) -> bool:
    """A waiting answer ended by its owner's side, its waiting calls declined with `why` (not
    committed); False if a decision claimed it first."""
    try:
        claim(session, message, MessageStatus(message.status), MessageStatus.CANCELLED)
    except Conflict:
        return False
    for call in (c for r in message.rounds for c in r.calls if c.status == call_status):
        call.status = CallStatus.DECLINED.value
        call.content = dumps({"error": {"type": "Declined", "message": why}})
        if call.signoff is not None:  # withdrawn: the requester decided, now
            call.signoff.status = SignoffStatus.WITHDRAWN.value
            call.signoff.decided_by_id, call.signoff.decided_at = user.id, utcnow()
            call.signoff.seen_at = call.signoff.decided_at
    message.completed_at = utcnow()
    return True


def being_carried_out(message: ChatMessage) -> bool:
    """A person's decision claimed this running answer and its calls are not all settled yet: a
    cancel now comes after that decision, and loses to it (409) rather than stop its bookings."""
    decided = (SignoffStatus.APPROVED, SignoffStatus.REJECTED)
    return any(
        (call.status == CallStatus.PENDING_CONFIRMATION and call.decided_by_id is not None)
        or (
            call.status == CallStatus.AWAITING_SIGNOFF
            and call.signoff is not None
            and call.signoff.status in decided
        )
        for call in (c for r in message.rounds for c in r.calls)
    )


def claim(session: Session, message: ChatMessage, expected: MessageStatus, to: MessageStatus) -> None:
    """Move the answer from `expected` to `to`, or raise Conflict if it is no longer `expected`: the
    database decides between concurrent claims (SQLite's write lock, PostgreSQL's row lock)."""
    claimed = session.execute(
        update(ChatMessage)
        .where(ChatMessage.id == message.id, ChatMessage.status == expected)
        # A stop asked for while it last ran is spent: it must not cancel what is decided now.
        .values(status=to.value, heartbeat_at=utcnow(), cancel_requested=False),
        execution_options={"synchronize_session": False},
    )
    if claimed.rowcount != 1:
        raise Conflict("another decision on this answer came first")
    set_committed_value(message, "status", to.value)  # as the database has it, without a 2nd UPDATE
    set_committed_value(message, "cancel_requested", False)


def locked(session: Session, message: ChatMessage) -> ChatMessage:
    """The answer as it is now, its row locked until the transaction ends (PostgreSQL; SQLite's
    write lock, taken by `writing`, already serialises): a decision that loses a race reads the
    winner's outcome and is told 409, never half of it."""
    session.execute(select(ChatMessage.id).where(ChatMessage.id == message.id).with_for_update())
    session.refresh(message)
    return message
