"""One answer being worked on, and the writes that move it: a decided call's outcome onto its
record, a pause for the rest of its calls, its ending (completed, failed, cancelled). What decides
when each happens is the loop (manager.py); this is what each step needs and writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy.orm import Session

from inventory_ai.assistant import answer_store
from inventory_ai.assistant import events as ev
from inventory_ai.assistant.model_chain import ModelUsage
from inventory_ai.assistant.prompts import (
    BROKEN,
    BUDGET_USED,
    MODEL_FAILED,
    SIGNOFF_WAITING,
    TOO_SLOW,
    UNAVAILABLE,
    stopped_status,
    stopped_text,
)
from inventory_ai.assistant.providers.base import AnswerTooSlow, ProviderError, TokenBudgetExhausted
from inventory_ai.assistant.recovery import Recovery
from inventory_ai.assistant.registry import Toolbox
from inventory_ai.assistant.tool_calls import CallOutcome, CallRunner, result_event
from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.database import begin_write, direct_write
from inventory_ai.logging import get_logger
from inventory_ai.models import CallStatus, ChatMessage, MessageStatus, ToolCallRecord, User, utcnow
from inventory_ai.services import audit
from inventory_ai.services.sites import Sites

log = get_logger(__name__)


@dataclass(frozen=True)
class AnswerRef:
    """Which answer a run works on: one assistant message in one conversation."""

    conversation_id: str
    message_id: str
    # The intake's screening of the question (intake.py); None where it was taken in elsewhere.
    flagged: bool | None = None
    # The user's warehouses as the intake read them, in its write transaction, moments before
    # the run (intake.py); None where it was taken in elsewhere: the run reads them itself.
    sites: Sites | None = None


@dataclass(frozen=True)
class Decision:
    """A person's decision on an answer's paused calls, claimed and recorded (decisions.py):
    what `ToolExecutionManager.resume` carries out."""

    answer: AnswerRef
    call_ids: list[str]
    approve: bool
    decided_by: int
    reason: str | None = None
    # call_id -> the arguments as approved, for calls the person edited
    edited: dict[str, dict] = field(default_factory=dict)
    signoff: bool = False  # a second person's decision on a call awaiting sign-off

    @property
    def kind(self) -> str:
        """approve, reject, edit (approved with changed arguments) or sign_off: its span's name."""
        if self.signoff:
            return "sign_off"
        if not self.approve:
            return "reject"
        return "edit" if self.edited else "approve"


@dataclass
class Answering:
    """One assistant message being worked on: what every step of the loop needs, and the writes
    that move it."""

    session: Session
    message: ChatMessage
    user: User
    toolbox: Toolbox
    context: ToolContext
    # Model calls made since the last stored step; written with the next one, in its transaction.
    usage: list[ModelUsage]
    # time.monotonic() by which this run must end (the model is not asked after it).
    deadline: float
    # Writes each call's audit event and metrics.
    calls: CallRunner
    # Whether the question was flagged at intake; None: not known here (intake.was_flagged).
    flagged: bool | None = None
    # The model whose reply came last: it wrote the answer.
    model: str | None = None

    def settle(
        self, position: int, record: ToolCallRecord, arguments, outcome: CallOutcome
    ) -> ev.ToolResultEvent:
        """A decided call's outcome onto its stored record and into the audit trail, then reported
        (the caller commits, then sends the event)."""
        record.status, record.content, record.error_type = outcome.status, outcome.content, outcome.error_type
        record.duration_ms = outcome.duration_ms
        audit.write(
            self.session,
            self.calls.answer_audit_events(
                self.user, self.message, record.name, record.call_id, arguments, outcome
            ),
        )
        self.calls.count_in_answer(record.name, outcome)
        return result_event(position, record, outcome)

    def wait_for_the_rest(self, signoff_value: Decimal) -> Iterator[ev.Event]:
        """After some calls were decided: the answer waits for the rest, the requester's first,
        then a sign-off; if nothing is left to wait for, it stays running (the loop goes on)."""
        message = self.message
        last_round = message.rounds[-1]
        statuses = {c.status for c in last_round.calls}
        if CallStatus.PENDING_CONFIRMATION in statuses:
            message.status = MessageStatus.AWAITING_CONFIRMATION.value
            self.session.commit()
            pending = [c for c in last_round.calls if c.status == CallStatus.PENDING_CONFIRMATION]
            yield ev.ConfirmationRequired(
                message.id,
                [
                    ev.PendingCall(c.call_id, c.name, json.loads(c.arguments), c.description or "")
                    for c in pending
                ],
            )
            return
        if CallStatus.AWAITING_SIGNOFF in statuses:
            begin_write(self.session)
            message.status = MessageStatus.AWAITING_SIGNOFF.value
            message.content = SIGNOFF_WAITING[message.language].format(value=signoff_value)
            self.session.commit()
            yield ev.Done(message.conversation_id, message.id, message.status, message.content)

    def decline_pending(self, why: str) -> Iterator[ev.Event]:
        begin_write(self.session)
        for record in (c for r in self.message.rounds for c in r.calls):
            if record.status == CallStatus.PENDING_CONFIRMATION:
                outcome = CallOutcome.declined(why)
                yield self.settle(self.message.rounds[-1].position, record, record.arguments, outcome)
        self.session.commit()

    def finish(self, status: MessageStatus, text: str, error_code: str | None = None) -> Iterator[ev.Event]:
        """End the answer, unless something else ended it first (a stale sweep): then it says so."""
        message = self.message
        if status == MessageStatus.CANCELLED:  # a stop after a booking ends it completed, saying so
            status, text = stopped_status(message), text or stopped_text(message)
        # Outside the session's transaction (which ends first: what it has pending is committed).
        with direct_write(self.session) as written:
            more_in, more_out = answer_store.usage(
                written, message, self.usage, totals=False
            )  # the ending adds them
            ended = answer_store.ending(
                written,
                message,
                status.value,
                text,  # the model's text was made storable as it came (model_chain.ask); the rest is ours
                error_code,
                self.model or message.model,
                more_in,
                more_out,
            )
        self.usage.clear()  # stored: cleared only once committed, or a retried ending loses them
        if not ended():  # told once committed: on PostgreSQL with the COMMIT's answer
            self.session.refresh(message)
            log.warning("answer_ended_elsewhere", message_id=message.id, status=message.status)
        yield ev.Done(message.conversation_id, message.id, message.status, message.content or "")

    def fail(self, exc: ProviderError) -> Iterator[ev.Event]:
        log.warning("model_failed", code=exc.code, message_id=self.message.id)
        language = self.message.language
        if isinstance(exc, TokenBudgetExhausted):
            text = BUDGET_USED[language]
        elif isinstance(exc, AnswerTooSlow):
            text = TOO_SLOW[language]
        elif exc.retry_after is not None:
            text = UNAVAILABLE[language].format(s=exc.retry_after)
        else:
            text = MODEL_FAILED[language].format(code=exc.code)
        yield ev.ErrorEvent(exc.code, text, exc.retry_after)
        yield from self.finish(MessageStatus.FAILED, text, exc.code)

    def end_broken(self, recovery: Recovery) -> Iterator[ev.Event]:
        """An unexpected error (a bug, the database gone away) ended the loop: the answer fails
        cleanly, its calls settled as the ledger has them, and the conversation takes new messages."""
        begin_write(self.session)
        message = self.session.get(ChatMessage, self.message.id)
        if message.status in (MessageStatus.RUNNING, MessageStatus.AWAITING_CONFIRMATION):
            recovery.settle_unfinished(self.session, message)
        self.message = message
        text = BROKEN[message.language]
        yield ev.ErrorEvent("internal_error", text)
        yield from self.finish(MessageStatus.FAILED, text, "internal_error")

    def end_abandoned(self, message_id: str, recovery: Recovery) -> None:
        """The client went away mid-answer (closed the page): the answer ends cancelled, its calls
        settled as the ledger has them. `message_id` is taken before: after a failed flush, reading
        an attribute of the answer would fail too."""
        begin_write(self.session)
        fresh = self.session.get(ChatMessage, message_id)
        if fresh is not None and fresh.status == MessageStatus.RUNNING:
            recovery.settle_unfinished(self.session, fresh)
            fresh.status = stopped_status(fresh).value
            fresh.content = fresh.content or stopped_text(fresh)
            fresh.completed_at = utcnow()
        self.session.commit()

    def ending(self) -> dict:
        """How this run ended, for its span (answer_spans.agent)."""
        try:
            message = self.message
            return {
                "status": message.status,
                "model": self.model or message.model,
                "error_code": message.error_code,
            }
        except Exception:  # a session a failure left unusable: the span says no more than that it ended
            return {}
