"""ToolExecutionManager: the loop that turns a staff message into model calls and tool calls.

Read top to bottom:
  prepare_message  store the user's message first (nothing is lost if the model fails)
  run              the loop: ask the model with the user's tools; no calls -> the answer;
                   calls -> execute the round, store it, ask again; at the cap one last call
                   without tools; events stream out all along
  _execute_round   check the round's calls and run them (calls.py), store the round, pause for
                   confirmation
  guarded          whatever happens, the answer ends; while it runs, it keeps a heartbeat
Beside it: who may answer and one streamed model call (asking.py), the words sent to the model
(prompts.py), one round's calls (calls.py), what people decide about paused calls (decisions.py),
answers whose process died (recovery.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from inventory_ai.assistant import events as ev
from inventory_ai.assistant import records
from inventory_ai.assistant.asking import ModelChain, ModelUsage
from inventory_ai.assistant.calls import CallOutcome, CallRunner
from inventory_ai.assistant.history import expand
from inventory_ai.assistant.prompts import (
    APOLOGY,
    BROKEN,
    BUDGET_USED,
    MODEL_FAILED,
    TOO_SLOW,
    UNAVAILABLE,
    stopped_text,
    system_prompt,
)
from inventory_ai.assistant.providers.base import (
    AnswerTooSlow,
    ChatProvider,
    ProviderError,
    TokenBudgetExhausted,
)
from inventory_ai.assistant.recovery import (
    HEARTBEAT_SECONDS,
    HEARTBEATS,
    STALE_AFTER_SECONDS,
    Recovery,
)
from inventory_ai.assistant.registry import Toolbox, ToolRegistry
from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.assistant.types import (
    Message,
    ModelReply,
    ModelRequest,
)
from inventory_ai.config import HISTORY_TOKEN_BUDGET
from inventory_ai.database import begin_write, in_transaction, writing
from inventory_ai.errors import Conflict, InvalidInput
from inventory_ai.logging import get_logger
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ToolCallRecord,
    User,
    new_call_id,
    utcnow,
)
from inventory_ai.observability import (
    FLAGGED,
    TOOL_ROUNDS,
)
from inventory_ai.services import audit, conversations
from inventory_ai.services.screening import screen
from inventory_ai.text import question_language, storable

log = get_logger(__name__)

MAX_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class Turn:
    """What `run` continues: one assistant message in one conversation."""

    conversation_id: str
    message_id: str


@dataclass
class Answering:
    """One assistant message being worked on: what every step of the loop needs."""

    session: Session
    message: ChatMessage
    user: User
    toolbox: Toolbox
    context: ToolContext
    # Model calls made since the last stored step; written with the next one, in its transaction.
    usage: list[ModelUsage]
    # time.monotonic() by which this run must end (the model is not asked after it).
    deadline: float
    # The model whose reply came last: it wrote the answer.
    model: str | None = None


class ToolExecutionManager:
    def __init__(
        self,
        registry: ToolRegistry,
        provider_factory: Callable[[Session], tuple[ChatProvider, ...]],
        engine: Callable[[], Engine],
        max_iterations: int = 5,
        max_calls_per_message: int = 20,
        result_budget_chars: int = 6000,
        answer_deadline_seconds: float = 120.0,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        stale_after_seconds: float = STALE_AFTER_SECONDS,
        daily_token_budget: int | None = None,
        history_token_budget: int = HISTORY_TOKEN_BUDGET,
    ):
        self.registry = registry
        self.models = ModelChain(provider_factory, daily_token_budget)
        self.engine = engine
        self.max_iterations = max_iterations
        self.answer_deadline_seconds = answer_deadline_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.stale_after_seconds = stale_after_seconds
        self.history_token_budget = history_token_budget  # tokens of history each model call carries
        self.calls = CallRunner(registry, max_calls_per_message, result_budget_chars)
        self.recovery = Recovery(registry, self.calls, stale_after_seconds)
        self._cancelled: set[str] = set()
        self._lock = threading.Lock()

    # --- starting and resuming ---------------------------------------------------------------

    def prepare_message(
        self,
        session: Session,
        user: User,
        text: str,
        conversation_id: str | None,
        page_language: str | None = None,
    ) -> Turn:
        text = storable((text or "").strip())
        if not text:
            raise InvalidInput("message is empty")
        if len(text) > MAX_MESSAGE_CHARS:
            raise InvalidInput(f"message is {len(text)} characters; the limit is {MAX_MESSAGE_CHARS}")
        conversation_id = conversation_id or None  # "" starts a new conversation, as no id does
        # Worked out before the write lock is taken: writers wait for each other (database.WriterTurns),
        # so only the reads that decide and the writes themselves happen while it is held.
        # The answer follows the question's language; a mixed one, the page's (text.question_language).
        language = question_language(text, page_language or user.language or "zh")
        screening = screen(text)
        rows = records.intake(user.id, text, language, conversation_id)
        flagged = []
        if screening.flagged:  # a signal: audited, and the model is reminded (prompts.system_prompt)
            flagged.append(audit.event(
                "prompt_injection_flagged", "flagged", user_id=user.id, role=user.role,
                conversation_id=rows.conversation_id, arguments={"reasons": list(screening.reasons)},
            ))  # fmt: skip
        with writing(session):
            conversation, seq = self._conversation_for(session, user, conversation_id)
            records.write_intake(session, rows, seq)
            audit.write(session, flagged)
            session.commit()
        if flagged:
            FLAGGED.inc()
        answer = records.adopt_intake(session, rows, conversation)
        return Turn(answer.conversation_id, answer.id)

    def _conversation_for(
        self, session: Session, user: User, conversation_id: str | None
    ) -> tuple[Conversation | None, int]:
        """The conversation a new message goes into (free to take it), and its last sequence
        number; None and 0 for a new one."""
        if conversation_id:
            conversation = conversations.own_conversation(session, user, conversation_id)
            waiting = self.recovery.blocking(session, conversation.id)
            if waiting is not None:
                why = {
                    MessageStatus.RUNNING: "an answer still running",
                    MessageStatus.AWAITING_CONFIRMATION: "an answer waiting for your confirmation",
                }[MessageStatus(waiting.status)]
                raise Conflict(f"this conversation has {why}", {"message_id": waiting.id})
            seq = session.scalar(
                select(func.coalesce(func.max(ChatMessage.created_seq), 0)).where(
                    ChatMessage.conversation_id == conversation.id
                )
            )
            return conversation, seq
        return None, 0

    def own_message(self, session: Session, user: User, message_id: str) -> ChatMessage:
        """The user's answer as it is: one whose process died is ended first (recovery.py)."""
        message = conversations.own_answer(session, user, message_id)
        self.recovery.seen(session, message)
        return message

    def answering(self, session: Session, turn: Turn) -> Answering:
        """Load what one answer's steps need. Permission is decided now: the role or the tool
        settings may have changed since the message was written or the calls were paused."""
        message = session.get(ChatMessage, turn.message_id)
        user = session.get(User, message.conversation.user_id)
        context = ToolContext.of_answer(
            session, self.engine(), user, message, tool_names=self.registry.names()
        )
        toolbox = self.registry.toolbox_for(user.role, session)
        deadline = time.monotonic() + self.answer_deadline_seconds
        return Answering(session, message, user, toolbox, context, [], deadline)

    # --- the loop ----------------------------------------------------------------------------

    def run(self, session: Session, turn: Turn) -> Iterator[ev.Event]:
        a = self.answering(session, turn)
        yield from self.guarded(a, self.loop(a))

    def guarded(self, a: Answering, steps: Iterator[ev.Event]) -> Iterator[ev.Event]:
        """Whatever happens inside, the answer ends: completed, waiting, cancelled or failed. While it
        runs, its heartbeat says this process is alive (recovery.py)."""
        # Taken now: after a failed flush, reading an attribute of the answer would fail too.
        engine, message_id = a.context.engine, a.message.id
        HEARTBEATS.add(engine, message_id, self.recovery.end_stale, self.heartbeat_seconds, self.note_cancel)
        try:
            yield from steps
        except GeneratorExit:
            # The client went away mid-answer (closed the page): stop here and say so in the record.
            a.session.rollback()
            self._mark_cancelled(a.session, message_id)
            raise
        except Exception as exc:
            log.exception("answer_failed", error_type=type(exc).__name__, message_id=message_id)
            a.session.rollback()
            yield from self._end_broken(a)
        finally:
            HEARTBEATS.discard(engine, message_id)
            with self._lock:
                self._cancelled.discard(message_id)

    def loop(self, a: Answering) -> Iterator[ev.Event]:
        message, session = a.message, a.session
        try:
            providers = self.models.providers(session, a.user.id)
        except ProviderError as exc:
            yield from self._fail(a, exc)
            return
        asked = next(
            (
                m
                for m in reversed(message.conversation.messages)
                if m.role == "user" and m.created_seq < message.created_seq
            ),
            None,
        )
        flagged = asked is not None and screen(asked.content).flagged
        while True:
            # A stop asked here is in _cancelled at once; one asked through another process is
            # brought there by the heartbeat thread (recovery.STOP_SECONDS): no query per round.
            if message.rounds and message.id in self._cancelled:
                yield from self.finish(a, MessageStatus.CANCELLED, "")
                return
            remaining = a.deadline - time.monotonic()
            if remaining <= 1:
                yield from self.finish(a, MessageStatus.FAILED, TOO_SLOW[message.language], "deadline")
                return
            iteration = len(message.rounds)
            with_tools = iteration < self.max_iterations
            request = ModelRequest(
                messages=(Message("system", system_prompt(a.user, message.language, flagged)),)
                + tuple(expand(message.conversation.messages, message, self.history_token_budget)),
                tools=a.toolbox.specs() if with_tools else (),
                language=message.language,
                timeout_seconds=remaining,
                role=a.user.role,
            )
            # Hold no transaction while the model talks: nothing is pending here, and an open
            # transaction would pin a snapshot (SQLite) or sit idle in transaction (PostgreSQL).
            if in_transaction(session):
                session.commit()
            try:
                answered = yield from self.models.ask(
                    providers,
                    request,
                    a.usage,
                    lambda: message.id in self._cancelled,
                    message.id,
                    a.user.id,
                    a.deadline,
                )
            except ProviderError as exc:
                if not with_tools:  # the summary at the cap failed: the fixed apology
                    yield from self.finish(
                        a, MessageStatus.FAILED, APOLOGY[message.language], "iteration_limit"
                    )
                    return
                yield from self._fail(a, exc)
                return
            reply, a.model = answered.reply, answered.model or a.model
            if reply is None:  # cancelled while the model was talking
                yield from self.finish(a, MessageStatus.CANCELLED, "")
                return
            if not with_tools or not reply.tool_calls:
                text = reply.text.strip() or (APOLOGY[message.language] if not with_tools else "")
                yield from self.finish(a, MessageStatus.COMPLETED, text)
                return
            pending = yield from self._execute_round(a, reply, iteration)
            if pending:  # the stop check and the pause in one write: no stop slips between them
                begin_write(session)
            if pending and self._cancel_requested(session, message):
                # Stopped while this round ran: nothing waits for a decision that will not come.
                yield from self._decline_pending(a, "cancelled by the user")
                yield from self.finish(a, MessageStatus.CANCELLED, "")
                return
            if pending:
                message.status = MessageStatus.AWAITING_CONFIRMATION.value
                message.cancel_requested = False
                session.commit()
                yield ev.ConfirmationRequired(message.id, pending)
                return

    # --- one round of tool calls -------------------------------------------------------------

    def _execute_round(self, a: Answering, reply: ModelReply, position: int) -> Iterator[ev.Event]:
        """Check and run one round's calls, store the round, and return the calls left pending.
        Every call gets the product's own id, whatever id (repeated, empty) the model gave it."""
        started = time.monotonic()
        used = sum(len(r.calls) for r in a.message.rounds)
        prepared = [
            self.calls.prepare(call, new_call_id(), a.toolbox, a.context, used + i)
            for i, call in enumerate(reply.tool_calls)
        ]
        for p in prepared:
            arguments = p.arguments if p.tool is not None and p.error is None else p.call.arguments
            yield ev.ToolCallStart(position, p.call_id, p.call.name, arguments, p.description)

        outcomes = self.calls.run(prepared, a.context)
        # The rows and audit events first: the write lock is held only while they are written.
        rows = records.round_rows(a.message, position, reply.text or None, prepared, outcomes)
        events = []
        for p, outcome, row in zip(prepared, outcomes, rows.calls, strict=True):
            waiting = outcome.status == CallStatus.PENDING_CONFIRMATION
            arguments = p.arguments if waiting else (p.arguments or p.call.arguments)
            events += self._audit_events(a, row["name"], row["call_id"], arguments, outcome)
        begin_write(a.session)  # tools committed on their own connections meanwhile
        records.usage(a.session, a.message, a.usage)
        a.usage.clear()
        records.write_round(a.session, rows, started)
        audit.write(a.session, events)
        a.session.commit()
        TOOL_ROUNDS.inc()
        for row, outcome in zip(rows.calls, outcomes, strict=True):
            self._count(row["name"], outcome)
        stored = records.adopt_round(a.session, a.message, rows)
        pending: list[ev.PendingCall] = []
        for p, outcome, record in zip(prepared, outcomes, stored, strict=True):
            if outcome.status == CallStatus.PENDING_CONFIRMATION:
                pending.append(ev.PendingCall(p.call_id, p.call.name, p.arguments, p.description or ""))
            else:
                yield self._result_event(position, record, outcome)
        return pending

    def settle(
        self, a: Answering, position: int, record: ToolCallRecord, arguments, outcome: CallOutcome
    ) -> ev.ToolResultEvent:
        """A decided call's outcome onto its stored record and into the audit trail, then reported
        (the caller commits, then sends the event)."""
        record.status, record.content, record.error_type = outcome.status, outcome.content, outcome.error_type
        record.duration_ms = outcome.duration_ms
        audit.write(a.session, self._audit_events(a, record.name, record.call_id, arguments, outcome))
        self._count(record.name, outcome)
        return self._result_event(position, record, outcome)

    def _audit_events(
        self, a: Answering, name: str, call_id: str, arguments, outcome: CallOutcome
    ) -> list[dict]:
        """A call's audit event, and a second one if its result looks like an injection: a signal,
        as for messages (the result carries a warning)."""
        events = [self.calls.audit_event(a.user, name, arguments, outcome, a.message)]
        if outcome.flagged:
            events.append(audit.event(
                "prompt_injection_in_result", "flagged", user_id=a.user.id, role=a.user.role,
                tool_name=name, conversation_id=a.message.conversation_id, message_id=a.message.id,
                arguments={"reasons": list(outcome.flagged), "tool_call_id": call_id},
            ))  # fmt: skip
        return events

    def _count(self, name: str, outcome: CallOutcome) -> None:
        """A call's metrics, once its audit events are written."""
        self.calls.count(name, outcome)
        if outcome.flagged:
            FLAGGED.inc()

    @staticmethod
    def _result_event(position: int, record: ToolCallRecord, outcome: CallOutcome) -> ev.ToolResultEvent:
        return ev.ToolResultEvent(
            position, record.call_id, record.name, outcome.status, outcome.content or "", outcome.duration_ms
        )

    # --- what a person decides: assistant/decisions.py; the loop only notices a cancel ---------

    def note_cancel(self, message_id: str) -> None:
        """A cancel for an answer this process may be running: seen at its next safe point."""
        with self._lock:
            self._cancelled.add(message_id)

    def _cancel_requested(self, session: Session, message: ChatMessage) -> bool:
        """Checked at each safe point. Every step before one commits, so the read below starts a
        fresh snapshot and sees a cancel made by another process."""
        if message.id in self._cancelled:
            return True
        return bool(session.scalar(select(ChatMessage.cancel_requested).where(ChatMessage.id == message.id)))

    def _mark_cancelled(self, session: Session, message_id: str) -> None:
        begin_write(session)
        fresh = session.get(ChatMessage, message_id)
        if fresh is not None and fresh.status == MessageStatus.RUNNING:
            self.recovery.settle_unfinished(session, fresh)
            fresh.status = MessageStatus.CANCELLED.value
            fresh.content = fresh.content or stopped_text(fresh)
            fresh.completed_at = utcnow()
        session.commit()

    def _decline_pending(self, a: Answering, why: str) -> Iterator[ev.Event]:
        begin_write(a.session)
        for record in (c for r in a.message.rounds for c in r.calls):
            if record.status == CallStatus.PENDING_CONFIRMATION:
                outcome = CallOutcome.declined(why)
                yield self.settle(a, a.message.rounds[-1].position, record, record.arguments, outcome)
        a.session.commit()

    # --- endings -----------------------------------------------------------------------------

    def finish(
        self, a: Answering, status: MessageStatus, text: str, error_code: str | None = None
    ) -> Iterator[ev.Event]:
        """End the answer, unless something else ended it first (a stale sweep): then it says so."""
        begin_write(a.session)
        more_in, more_out = records.usage(a.session, a.message, a.usage, totals=False)  # the ending adds them
        a.usage.clear()
        message = a.message
        if status == MessageStatus.CANCELLED and not text:
            text = stopped_text(message)
        ended = records.ending(
            a.session,
            message,
            status.value,
            storable(text),
            error_code,
            a.model or message.model,
            more_in,
            more_out,
        )
        a.session.commit()
        if not ended:
            a.session.refresh(message)
            log.warning("answer_ended_elsewhere", message_id=message.id, status=message.status)
        yield ev.Done(message.conversation_id, message.id, message.status, message.content or "")

    def _fail(self, a: Answering, exc: ProviderError) -> Iterator[ev.Event]:
        log.warning("model_failed", code=exc.code, message_id=a.message.id)
        language = a.message.language
        if isinstance(exc, TokenBudgetExhausted):
            text = BUDGET_USED[language]
        elif isinstance(exc, AnswerTooSlow):
            text = TOO_SLOW[language]
        elif exc.retry_after is not None:
            text = UNAVAILABLE[language].format(s=exc.retry_after)
        else:
            text = MODEL_FAILED[language].format(code=exc.code)
        yield ev.ErrorEvent(exc.code, text, exc.retry_after)
        yield from self.finish(a, MessageStatus.FAILED, text, exc.code)

    def _end_broken(self, a: Answering) -> Iterator[ev.Event]:
        """An unexpected error (a bug, the database gone away) ended the loop: the answer fails
        cleanly, its calls settled as the ledger has them, and the conversation takes new messages."""
        begin_write(a.session)
        message = a.session.get(ChatMessage, a.message.id)
        if message.status in (MessageStatus.RUNNING, MessageStatus.AWAITING_CONFIRMATION):
            self.recovery.settle_unfinished(a.session, message)
        a.message = message
        text = BROKEN[message.language]
        yield ev.ErrorEvent("internal_error", text)
        yield from self.finish(a, MessageStatus.FAILED, text, "internal_error")
