"""What people decide about the calls an answer paused for: approve (as asked or edited), reject
(with a reason), withdraw, and sign off large bookings as a second person.

Every decision first claims the answer with one conditional update (awaiting -> running, or
-> cancelled): of several at once exactly one wins, the rest are told 409. The winner settles the
calls it decided, running approved ones through the same path as any call (calls.py), and the
answer resumes in the loop (manager.py), or waits for a sign-off (services/approvals.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from itertools import chain

from sqlalchemy import select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from inventory_ai.assistant import events as ev
from inventory_ai.assistant.calls import CallOutcome, PreparedCall
from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.direct import FROM_MCP
from inventory_ai.assistant.manager import Answering, ToolExecutionManager, Turn
from inventory_ai.assistant.prompts import SIGNOFF_WAITING, decided_summary
from inventory_ai.assistant.tools.base import PermissionDenied, ToolContext, ToolError
from inventory_ai.assistant.types import ToolCall
from inventory_ai.database import begin_write, writing
from inventory_ai.errors import Conflict, Forbidden, InvalidInput, NotFound
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    MessageStatus,
    Signoff,
    SignoffStatus,
    ToolCallRecord,
    User,
    utcnow,
)
from inventory_ai.services import approvals, audit


@dataclass(frozen=True)
class Decision:
    """A claimed decision, carried out by `decide`."""

    turn: Turn
    call_ids: list[str]
    approve: bool
    decided_by: int
    reason: str | None = None
    # call_id -> the arguments as approved, for calls the person edited
    edited: dict[str, dict] = field(default_factory=dict)
    signoff: bool = False  # a second person's decision on a call awaiting sign-off


class Decisions:
    def __init__(
        self, answers: ToolExecutionManager, signoff_value: Decimal = Decimal(5000), signoff_hours: float = 24
    ):
        self.answers = answers
        self.signoff_value = signoff_value
        self.signoff_hours = signoff_hours

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
        turn = Turn(message.conversation_id, message.id)
        edits = {call_id: arguments_now for call_id, (arguments_now, _text) in edited.items()}
        return Decision(turn, [c.call_id for c in pending], approve, user.id, reason, edits)

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
        """Carry the decision out now, before the caller reads a single event: a page closed or a
        stream cut mid-way must not leave an approved booking undone. What follows (the model
        answering with the results) runs as the caller reads on, and stops if they go away."""
        a = self.answers.answering(session, decision.turn)
        now = chain(self._carry_out_all(a, decision), self._wait_for_the_rest(a))
        return self._then(a, decision.turn, list(self.answers.guarded(a, now)))

    def _then(self, a: Answering, turn: Turn, carried_out: list[ev.Event]) -> Iterator[ev.Event]:
        yield from carried_out
        if a.message.status == MessageStatus.RUNNING:  # not waiting again, and not failed on the way
            # A streamed response reads on after the view returned, in an app context (and so a
            # database session) of its own: the answer is loaded again in it, or its objects
            # would belong to the request's closed session. Its deadline stays the one it had.
            a = replace(self.answers.answering(a.session, turn), deadline=a.deadline, model=a.model)
            yield from self.answers.guarded(a, self._continue(a))

    def _carry_out_all(self, a: Answering, decision: Decision) -> Iterator[ev.Event]:
        last_round = a.message.rounds[-1]
        waiting_for = CallStatus.AWAITING_SIGNOFF if decision.signoff else CallStatus.PENDING_CONFIRMATION
        chosen = [c for c in last_round.calls if c.call_id in decision.call_ids and c.status == waiting_for]
        arguments = {
            c.call_id: decision.edited.get(c.call_id) or json.loads(c.approved_arguments or c.arguments)
            for c in chosen
        }
        values = {} if decision.signoff or not decision.approve else self._values(a, last_round, arguments)
        for record in chosen:
            value = values.get(record.call_id)
            if value is not None and approvals.needs_signoff(a.user.role, value, self.signoff_value):
                begin_write(a.session)
                self._ask_for_signoff(a, record, value)
                a.session.commit()
                continue
            outcome = self._carry_out(a, record, arguments[record.call_id], decision)
            begin_write(a.session)  # the tool committed on its own connection meanwhile
            event = self.answers.settle(a, last_round.position, record, arguments[record.call_id], outcome)
            a.session.commit()
            yield event

    def _carry_out(
        self, a: Answering, record: ToolCallRecord, arguments: dict, decision: Decision
    ) -> CallOutcome:
        if not decision.approve:
            who = "the user" if not decision.signoff else "the manager signing off"
            message = f"declined by {who}" + (f": {decision.reason}" if decision.reason else "")
            return CallOutcome.declined(message)
        tool = a.toolbox.get(record.name)
        if tool is None:  # the role or the settings changed meanwhile
            return CallOutcome.failed(
                PermissionDenied(f"tool {record.name!r} is no longer available to this user")
            )
        call = ToolCall(record.model_call_id, record.name, record.arguments)
        # The tool runs on a connection of its own: this session's read ends first, so the thread
        # holds one connection at a time (with both, a worker whose threads all approve at once
        # waits on its own pool until the tools fail).
        a.session.commit()
        outcome = self.answers.calls.invoke(PreparedCall(call, record.call_id, tool, arguments), a.context)
        original = json.loads(record.arguments)
        changes = {
            k: {"from": original.get(k), "to": v} for k, v in arguments.items() if original.get(k) != v
        }
        if changes and outcome.status == CallStatus.SUCCESS:  # the model and the page say what changed
            outcome.content = dumps({"approved_with_changes": changes, **json.loads(outcome.content)})
        return outcome

    def _values(self, a: Answering, last_round, arguments: dict[str, dict]) -> dict[str, Decimal]:
        """What each approved booking is worth for the four-eyes rule: the answer's bookings count
        together (two of 500 kg are one of 1000), those approved earlier in it included."""
        own = {call_id: self._value(a, record, arguments[call_id])
               for record in last_round.calls if (call_id := record.call_id) in arguments}  # fmt: skip
        earlier = sum(
            (self._value(a, c, json.loads(c.approved_arguments or c.arguments)) or Decimal(0))
            for r in a.message.rounds for c in r.calls
            if c.status in (CallStatus.SUCCESS, CallStatus.AWAITING_SIGNOFF) and c.call_id not in arguments
        )  # fmt: skip
        together = earlier + sum(v for v in own.values() if v is not None)
        return {call_id: together for call_id, value in own.items() if value is not None}

    def _value(self, a: Answering, record: ToolCallRecord, arguments: dict) -> Decimal | None:
        tool = a.toolbox.get(record.name)
        if tool is None:
            return None
        context = ToolContext.of_answer(
            a.session, a.context.engine, a.user, a.message, tool_call_id=record.call_id
        )
        try:
            return tool.value_cny(arguments, context)
        except ToolError:
            return None

    def _ask_for_signoff(self, a: Answering, record: ToolCallRecord, value: Decimal) -> None:
        """A large booking by someone who may not sign it off themselves waits for a second person."""
        record.status = CallStatus.AWAITING_SIGNOFF.value
        approvals.request(a.session, record, a.message.id, a.user, value, self.signoff_hours)
        audit.record(
            a.session, "signoff_requested", "waiting", user_id=a.user.id, role=a.user.role, tool_name=record.name,
            arguments={"tool_call_id": record.call_id, "value_cny": str(value)},
            conversation_id=a.message.conversation_id, message_id=a.message.id,
        )  # fmt: skip

    def _wait_for_the_rest(self, a: Answering) -> Iterator[ev.Event]:
        """After some calls were decided: the answer waits for the rest, the requester's first,
        then a sign-off; if nothing is left to wait for, it stays running for `_continue`."""
        last_round = a.message.rounds[-1]
        statuses = {c.status for c in last_round.calls}
        if CallStatus.PENDING_CONFIRMATION in statuses:
            a.message.status = MessageStatus.AWAITING_CONFIRMATION.value
            a.session.commit()
            pending = [c for c in last_round.calls if c.status == CallStatus.PENDING_CONFIRMATION]
            yield ev.ConfirmationRequired(
                a.message.id,
                [
                    ev.PendingCall(c.call_id, c.name, json.loads(c.arguments), c.description or "")
                    for c in pending
                ],
            )
            return
        if CallStatus.AWAITING_SIGNOFF in statuses:
            begin_write(a.session)
            a.message.status = MessageStatus.AWAITING_SIGNOFF.value
            a.message.content = SIGNOFF_WAITING[a.message.language].format(value=self.signoff_value)
            a.session.commit()
            yield ev.Done(a.message.conversation_id, a.message.id, a.message.status, a.message.content)

    def _continue(self, a: Answering) -> Iterator[ev.Event]:
        """Every call decided: the model answers with the results."""
        if a.message.source == FROM_MCP:  # no model asked this: the answer is what happened
            yield from self.answers.finish(a, MessageStatus.COMPLETED, decided_summary(a.message))
            return
        yield from self.answers.loop(a)

    # --- a second person: sign-off -------------------------------------------------------------

    def prepare_signoff(
        self, session: Session, signer: User, tool_call_id: str, approve: bool, reason: str | None = None
    ) -> Decision:
        with writing(session):
            self.answers.recovery.expire_signoffs(session)
            signoff = approvals.of_call(session, tool_call_id)
            if signoff is None:
                raise NotFound(f"no booking {tool_call_id!r} waits for a sign-off")
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
        turn = Turn(message.conversation_id, message.id)
        return Decision(turn, [tool_call_id], approve, signer.id, reason, signoff=True)

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
                try:
                    claim(session, message, MessageStatus(message.status), MessageStatus.CANCELLED)
                except Conflict:  # a decision came first: it is running now
                    session.refresh(message)
                else:
                    for call in (c for r in message.rounds for c in r.calls if c.status == call_status):
                        call.status = CallStatus.DECLINED.value
                        call.content = dumps({"error": {"type": "Declined", "message": why}})
                        if call.signoff is not None:
                            call.signoff.status = SignoffStatus.WITHDRAWN.value
                    message.completed_at = utcnow()
                    session.commit()
                    return message
            if message.status == MessageStatus.RUNNING:
                message.cancel_requested = True
                self.answers.note_cancel(message.id)
                session.commit()
            return message


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
