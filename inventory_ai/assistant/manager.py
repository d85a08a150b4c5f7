"""ToolExecutionManager: the loop that turns a staff message into model calls and tool calls, and
owns every run of it from start to end: a new message, a run resumed after a decision or a
sign-off, and one tool call from outside a chat (MCP).

Read top to bottom:
  prepare_message  store the user's message first (nothing is lost if the model fails)
  run              the loop: ask the model with the user's tools; no calls -> the answer;
                   calls -> execute the round, store it, ask again; at the cap one last call
                   without tools; events stream out all along
  resume           after a person decided (decisions.py claimed and recorded it): carry the
                   decided calls out, wait for what is still undecided, or go on with the loop
  call_directly    one call from outside a chat, through the same checks; a booking waits
  _guarded         whatever happens, the answer ends; while it runs, it keeps a heartbeat
Beside it, below it: who may answer and one streamed model call (model_chain.py), the words sent
to the model (prompts.py), one round's calls (tool_calls.py), the four-eyes rule
(signoff_rule.py), what the loop writes (answer_store.py), answers whose process died (recovery.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from decimal import Decimal
from itertools import chain

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from inventory_ai import tracing
from inventory_ai.assistant import answer_spans, answer_store, effects, intake
from inventory_ai.assistant import events as ev
from inventory_ai.assistant.answering import Answering, AnswerRef, Decision
from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.direct_calls import FROM_MCP, DirectResult, awaiting_approval, waiting_answer
from inventory_ai.assistant.history import expand
from inventory_ai.assistant.model_chain import ModelChain
from inventory_ai.assistant.prompts import APOLOGY, TOO_SLOW, decided_summary, system_prompt
from inventory_ai.assistant.providers.base import ChatProvider, ProviderError
from inventory_ai.assistant.recovery import HEARTBEAT_SECONDS, HEARTBEATS, STALE_AFTER_SECONDS, Recovery
from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.signoff_rule import SignoffRule
from inventory_ai.assistant.tool_calls import CallOutcome, CallRunner, PreparedCall, result_event
from inventory_ai.assistant.tools.base import PermissionDenied, ToolContext
from inventory_ai.assistant.types import Message, ModelReply, ModelRequest, ToolCall
from inventory_ai.config import HISTORY_TOKEN_BUDGET
from inventory_ai.database import begin_write, direct_write, held, in_transaction, resolved
from inventory_ai.logging import get_logger
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    MessageStatus,
    ToolCallRecord,
    User,
    new_call_id,
)
from inventory_ai.observability import TOOL_ROUNDS
from inventory_ai.services import audit, conversations
from inventory_ai.text import storable

log = get_logger(__name__)


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
        signoff_value: Decimal = Decimal(5000),
        signoff_hours: float = 24,
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
        self.signoffs = SignoffRule(signoff_value, signoff_hours)
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
    ) -> AnswerRef:
        """Store the user's message and the answer that starts running (intake.py); the answer
        follows the question's language, a mixed one the page's (`page_language`, else the user's)."""
        return intake.take_message(session, user, text, conversation_id, self.recovery, page_language)

    @contextmanager
    def override(
        self,
        provider: ChatProvider | None = None,
        *,
        providers: Callable[[Session], tuple[ChatProvider, ...]] | None = None,
    ) -> Iterator[ChatProvider | None]:
        """Inside the block, `provider` alone answers every model call (or the fallback chain that
        `providers(session)` makes); the configured chain comes back after. The one seam for tests
        and tools to put a model in, as pydantic-ai's `Agent.override`; the scripted model for it
        ships in assistant/testing.py."""
        if (provider is None) == (providers is None):
            raise TypeError("give a provider or a chain of providers, not both")
        kept = self.models.provider_factory
        self.models.provider_factory = providers or (lambda _session: (provider,))
        try:
            yield provider
        finally:
            self.models.provider_factory = kept

    def own_message(self, session: Session, user: User, message_id: str) -> ChatMessage:
        """The user's answer as it is: one whose process died is ended first (recovery.py)."""
        message = conversations.own_answer(session, user, message_id)
        self.recovery.seen(session, message)
        return message

    def _answering(self, session: Session, ref: AnswerRef) -> Answering:
        """Load what one answer's steps need. Permission is decided now: the role or the tool
        settings may have changed since the message was written or the calls were paused."""
        plain = resolved(session)  # looked up once for both
        message = held(plain, ChatMessage, ref.message_id)
        user = held(plain, User, message.conversation.user_id)
        context = ToolContext.of_answer(
            session, self.engine(), user, message, ref.sites, tool_names=self.registry.names()
        )
        toolbox = self.registry.toolbox_for(user.role, session)
        deadline = time.monotonic() + self.answer_deadline_seconds
        return Answering(session, message, user, toolbox, context, [], deadline, self.calls, ref.flagged)

    # --- the loop ----------------------------------------------------------------------------

    def run(self, session: Session, ref: AnswerRef) -> Iterator[ev.Event]:
        answering = self._answering(session, ref)
        steps = self._guarded(answering, self._loop(answering))
        yield from answer_spans.agent(steps, ref.conversation_id, ref.message_id, answering.ending)

    def _guarded(self, answering: Answering, steps: Iterator[ev.Event]) -> Iterator[ev.Event]:
        """Whatever happens inside, the answer ends: completed, waiting, cancelled or failed. While it
        runs, its heartbeat says this process is alive (recovery.py)."""
        # Taken now: after a failed flush, reading an attribute of the answer would fail too.
        engine, message_id = answering.context.engine, answering.message.id
        HEARTBEATS.add(engine, message_id, self.recovery.end_stale, self.heartbeat_seconds, self.note_cancel)
        try:
            yield from steps
        except GeneratorExit:
            # The client went away mid-answer (closed the page): stop here and say so in the record.
            answering.session.rollback()
            answering.end_abandoned(message_id, self.recovery)
            raise
        except Exception as exc:
            log.exception("answer_failed", error_type=type(exc).__name__, message_id=message_id)
            answering.session.rollback()
            yield from answering.end_broken(self.recovery)
        finally:
            HEARTBEATS.discard(engine, message_id)
            with self._lock:
                self._cancelled.discard(message_id)

    def _loop(self, answering: Answering) -> Iterator[ev.Event]:
        message, session = answering.message, answering.session
        try:
            providers = self.models.providers(session, answering.user.id)
        except ProviderError as exc:
            yield from answering.fail(exc)
            return
        flagged = answering.flagged
        if flagged is None:  # resumed in another request: the intake's verdict, as it was recorded
            flagged = intake.was_flagged(session, message)
        # What does not change while it runs, read once (each read of an ORM attribute is a call).
        message_id, language, user_id = message.id, message.language, answering.user.id
        while True:
            # A stop asked here is in _cancelled at once; one asked through another process is
            # brought there by the heartbeat thread (recovery.STOP_SECONDS): no query per round.
            rounds = message.rounds
            if rounds and message_id in self._cancelled:
                yield from answering.finish(MessageStatus.CANCELLED, "")
                return
            remaining = answering.deadline - time.monotonic()
            if remaining <= 1:
                yield from answering.finish(MessageStatus.FAILED, TOO_SLOW[language], "deadline")
                return
            iteration = len(rounds)
            with_tools = iteration < self.max_iterations
            request = ModelRequest(
                messages=(Message("system", system_prompt(answering.user, language, flagged)),)
                + tuple(expand(message.conversation.messages, message, self.history_token_budget)),
                tools=answering.toolbox.specs() if with_tools else (),
                language=language,
                timeout_seconds=remaining,
                role=answering.user.role,
                warehouses=None if (mine := answering.user.warehouses) is None else tuple(mine),
                flagged=flagged,
            )
            # Hold no transaction while the model talks: nothing is pending here, and an open
            # transaction would pin a snapshot (SQLite) or sit idle in transaction (PostgreSQL).
            if in_transaction(session):
                session.commit()
            try:
                answered = yield from self.models.ask(
                    providers,
                    request,
                    answering.usage,
                    lambda: message_id in self._cancelled,
                    message_id,
                    user_id,
                    answering.deadline,
                )
            except ProviderError as exc:
                if not with_tools:  # the summary at the cap failed: the fixed apology
                    yield from answering.finish(MessageStatus.FAILED, APOLOGY[language], "iteration_limit")
                    return
                yield from answering.fail(exc)
                return
            reply, answering.model = answered.reply, answered.model or answering.model
            if reply is None:  # cancelled while the model was talking
                yield from answering.finish(MessageStatus.CANCELLED, "")
                return
            if not with_tools or not reply.tool_calls:
                text = reply.text.strip() or (APOLOGY[language] if not with_tools else "")
                yield from answering.finish(MessageStatus.COMPLETED, text)
                return
            pending = yield from self._execute_round(answering, reply, iteration)
            if pending:  # the stop check and the pause in one write: no stop slips between them
                begin_write(session)
            if pending and self._cancel_requested(session, message):
                # Stopped while this round ran: nothing waits for a decision that will not come.
                yield from answering.decline_pending("cancelled by the user")
                yield from answering.finish(MessageStatus.CANCELLED, "")
                return
            if pending:
                message.status = MessageStatus.AWAITING_CONFIRMATION.value
                message.cancel_requested = False
                session.commit()
                yield ev.ConfirmationRequired(message.id, pending)
                return

    # --- one round of tool calls -------------------------------------------------------------

    def _execute_round(self, answering: Answering, reply: ModelReply, position: int) -> Iterator[ev.Event]:
        """Check and run one round's calls, store the round, and return the calls left pending.
        Every call gets the product's own id, whatever id (repeated, empty) the model gave it."""
        started = time.monotonic()
        used = sum(len(r.calls) for r in answering.message.rounds)
        prepared = [
            self.calls.prepare(call, new_call_id(), answering.toolbox, answering.context, used + i)
            for i, call in enumerate(reply.tool_calls)
        ]
        for p in prepared:
            arguments = p.arguments if p.tool is not None and p.error is None else p.call.arguments
            yield ev.ToolCallStart(position, p.call_id, p.call.name, arguments, p.description)

        outcomes = self.calls.run(prepared, answering.context)
        # The rows and audit events first: the write lock is held only while they are written.
        rows = answer_store.round_rows(answering.message, position, reply.text or None, prepared, outcomes)
        events = []
        for p, outcome, row in zip(prepared, outcomes, rows.calls, strict=True):
            waiting = outcome.status == CallStatus.PENDING_CONFIRMATION
            arguments = p.arguments if waiting else (p.arguments or p.call.arguments)
            events += self.calls.answer_audit_events(
                answering.user, answering.message, row["name"], row["call_id"], arguments, outcome
            )
        # Outside the session's transaction: nothing in it reads these rows back (adopt_round hands
        # them to it after the commit).
        with direct_write(answering.session) as written:
            answer_store.usage(written, answering.message, answering.usage)
            answer_store.write_round(written, rows, started)
            audit.write(written, events)
        answering.usage.clear()  # stored: else the ending writes them (the daily budget counts them)
        TOOL_ROUNDS.inc()
        for row, outcome in zip(rows.calls, outcomes, strict=True):
            self.calls.count_in_answer(row["name"], outcome)
        stored = answer_store.adopt_round(answering.session, answering.message, rows)
        pending: list[ev.PendingCall] = []
        for p, outcome, record in zip(prepared, outcomes, stored, strict=True):
            if outcome.status == CallStatus.PENDING_CONFIRMATION:
                pending.append(ev.PendingCall(p.call_id, p.call.name, p.arguments, p.description or ""))
            else:
                yield result_event(position, record, outcome)
        return pending

    # --- resuming after a person decided (decisions.py claims and records the decision) --------

    def resume(self, session: Session, decision: Decision) -> Iterator[ev.Event]:
        """Carry the decision out now, before the caller reads a single event: a page closed or a
        stream cut mid-way must not leave an approved booking undone. What follows (the model
        answering with the results) runs as the caller reads on, and stops if they go away."""
        answering = self._answering(session, decision.answer)
        now = chain(
            self._carry_out_decided(answering, decision),
            answering.wait_for_the_rest(self.signoffs.signoff_value),
        )
        # The decision's span (the bookings it makes are its children), linked to the answer's.
        links = (
            audit.traces_of(session, decision.answer.conversation_id, decision.answer.message_id)
            if tracing.ENABLED
            else ()
        )
        with answer_spans.decision(
            decision.kind, decision.approve, decision.answer.conversation_id,
            decision.answer.message_id, decision.call_ids, decision.decided_by, links,
        ):  # fmt: skip
            carried_out = list(self._guarded(answering, now))
        return self._go_on(answering, carried_out, links)

    def _go_on(self, answering: Answering, carried_out: list[ev.Event], links=()) -> Iterator[ev.Event]:
        yield from carried_out
        if answering.message.status == MessageStatus.RUNNING:  # not waiting again, nor failed on the way
            # A streamed response reads on after the view returned, in an app context (and so a
            # database session) of its own: the answer is loaded again in it, or its objects
            # would belong to the request's closed session. Its deadline stays the one it had.
            ref = AnswerRef(answering.message.conversation_id, answering.message.id)
            answering = replace(
                self._answering(answering.session, ref), deadline=answering.deadline, model=answering.model
            )
            steps = self._guarded(answering, self._continue(answering))
            yield from answer_spans.agent(steps, ref.conversation_id, ref.message_id, answering.ending, links)

    def _carry_out_decided(self, answering: Answering, decision: Decision) -> Iterator[ev.Event]:
        last_round = answering.message.rounds[-1]
        waiting_for = CallStatus.AWAITING_SIGNOFF if decision.signoff else CallStatus.PENDING_CONFIRMATION
        chosen = [c for c in last_round.calls if c.call_id in decision.call_ids and c.status == waiting_for]
        arguments = {
            c.call_id: decision.edited.get(c.call_id) or json.loads(c.approved_arguments or c.arguments)
            for c in chosen
        }
        values = {}
        if decision.approve and not decision.signoff:
            values = self.signoffs.values(answering.toolbox, answering.context, answering.message, arguments)
        for record in chosen:
            value = values.get(record.call_id)
            if not self.signoffs.needs_signoff(answering.user, value):
                outcome = self._carry_out(answering, record, arguments[record.call_id], decision)
                begin_write(answering.session)  # the tool committed on its own connection meanwhile
                event = answering.settle(last_round.position, record, arguments[record.call_id], outcome)
                answering.session.commit()
                yield event
                continue
            begin_write(answering.session)  # a large booking waits for a second person
            self.signoffs.ask(answering.session, answering.user, answering.message, record, value)
            answering.session.commit()
            answer_spans.tool_settled(record.name, record.call_id, record, record.model_call_id)

    def _carry_out(
        self, answering: Answering, record: ToolCallRecord, arguments: dict, decision: Decision
    ) -> CallOutcome:
        tool = answering.toolbox.get(record.name) if decision.approve else None
        if tool is not None:
            call = ToolCall(record.model_call_id, record.name, record.arguments)
            # The tool runs on a connection of its own: this session's read ends first, so the thread
            # holds one connection at a time (with both, a worker whose threads all approve at once
            # waits on its own pool until the tools fail).
            answering.session.commit()
            outcome = self.calls.invoke(
                PreparedCall(call, record.call_id, tool, arguments), answering.context
            )
            original = json.loads(record.arguments)
            changes = {
                k: {"from": original.get(k), "to": v} for k, v in arguments.items() if original.get(k) != v
            }
            if changes and outcome.status == CallStatus.SUCCESS:  # the model and the page say what changed
                outcome.content = dumps({"approved_with_changes": changes, **json.loads(outcome.content)})
            return outcome
        if not decision.approve:
            who = "the user" if not decision.signoff else "the manager signing off"
            message = f"declined by {who}" + (f": {decision.reason}" if decision.reason else "")
            outcome = CallOutcome.declined(message)
        else:  # the role or the settings changed meanwhile
            outcome = CallOutcome.failed(
                PermissionDenied(f"tool {record.name!r} is no longer available to this user")
            )
        answer_spans.tool_settled(record.name, record.call_id, outcome, record.model_call_id)
        return outcome

    def _continue(self, answering: Answering) -> Iterator[ev.Event]:
        """Every call decided: the model answers with the results."""
        # No model asked this (MCP), or its conversation closed to its owner while the booking waited
        # (an admin took a warehouse away): the answer is what happened, and no model is sent the
        # conversation again.
        if answering.message.source == FROM_MCP or not conversations.is_open(
            answering.session, answering.user, answering.message.conversation_id
        ):
            yield from answering.finish(MessageStatus.COMPLETED, decided_summary(answering.message))
            return
        yield from self._loop(answering)

    # --- one call from outside a chat (MCP): direct_calls.py ----------------------------------

    def call_directly(
        self, session: Session, user: User, name: str, arguments: dict, source: str = FROM_MCP
    ) -> DirectResult:
        """The same checks as a call the model makes; a booking is not made here but waits, in an
        answer of its own, for its user's approval (decided then through `resume`)."""
        call_id = new_call_id()
        name = storable(name)  # the one cleaning of a call from outside a chat; its arguments: prepare
        toolbox = self.registry.toolbox_for(user.role, session)
        context = ToolContext.of_answer(session, self.engine(), user, None, tool_names=self.registry.names())
        wire = ToolCall(call_id, name, dumps(arguments) if isinstance(arguments, dict) else str(arguments))
        session.commit()  # the tool's own connection, not a second one beside this read (_carry_out)
        prepared = self.calls.prepare(wire, call_id, toolbox, context, ordinal=0)
        [outcome] = self.calls.run([prepared], context)
        begin_write(session)
        if outcome.status == CallStatus.PENDING_CONFIRMATION:
            message = waiting_answer(session, user, prepared.call, call_id, prepared.description, source)
            self.calls.audit(session, user, name, prepared.arguments, outcome, message, source)
            session.commit()
            effect = effects.of_call(
                self.registry, session, context.engine, user, name, call_id, prepared.arguments
            )
            content = awaiting_approval(message, call_id, prepared.description, effect)
            return DirectResult(call_id, outcome.status, content, prepared.description, message.id)
        self.calls.audit(session, user, name, prepared.arguments or wire.arguments, outcome, None, source)
        session.commit()
        return DirectResult(call_id, outcome.status, outcome.content or "")

    # --- a cancel: decisions.py decides it; the loop notices it ----------------------------

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
