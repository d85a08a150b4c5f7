"""Answers whose process died: found by their stopped heartbeat, and ended as the ledger has them.

The process working on an answer refreshes `messages.heartbeat_at` every few seconds (HEARTBEAT_SECONDS) from one
background thread (whatever the answer is waiting for: the model, a tool, the database). An answer
still `running` whose heartbeat is older than STALE_AFTER_SECONDS belongs to a process that was killed or
lost: the manager ends it `failed` (`interrupted`), and its conversation takes the next message.
Stale answers are ended (`Recovery.end_stale`) when someone touches them (a new message in the
conversation, a look at the answer, a cancel) and by every process's heartbeat thread as it goes.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.prompts import INTERRUPTED, SIGNOFF_EXPIRED
from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.tool_calls import CallRunner
from inventory_ai.assistant.tools.base import ToolContext, ToolError
from inventory_ai.database import begin_write, write_transaction, writing
from inventory_ai.logging import get_logger
from inventory_ai.models import CallStatus, ChatMessage, MessageStatus, SignoffStatus, User, utcnow
from inventory_ai.services import approvals

log = get_logger(__name__)

HEARTBEAT_SECONDS = 10.0
STALE_AFTER_SECONDS = 45.0
STOP_SECONDS = 1.0  # how soon a stop asked for through another process reaches a running answer


def is_stale(message: ChatMessage, stale_after: float, now=None) -> bool:
    if message.status != MessageStatus.RUNNING:
        return False
    beat = message.heartbeat_at or message.created_at
    return beat is not None and ((now or utcnow()) - beat).total_seconds() > stale_after


def stale_answers(session: Session, stale_after: float, message_ids: list[str] | None = None) -> list[str]:
    """Ids of running answers whose heartbeat stopped (among these ids, or up to 50 of all)."""
    stmt = select(ChatMessage.id).where(
        ChatMessage.status == MessageStatus.RUNNING,
        ChatMessage.heartbeat_at < utcnow() - timedelta(seconds=stale_after),
    )
    if message_ids is not None:
        stmt = stmt.where(ChatMessage.id.in_(message_ids))
    return list(session.scalars(stmt.limit(50)))


@dataclass
class _Database:
    """One database this process works on: the answers it is running there, and how it sweeps."""

    sweep: Callable[[Session], object]
    interval: float
    running: set[str] = field(default_factory=set)
    watched: bool = False  # swept even while nothing runs (a served app; tests do not watch)
    last_beat: float = field(default_factory=time.monotonic)
    # Told of a stop asked for in another process (a cancel that reached another worker).
    on_stop: Callable[[str], object] | None = None
    last_look: float = field(default_factory=time.monotonic)


class Heartbeats:
    """The answers this process is running, and the one thread that keeps them alive and ends
    the stale answers of the databases it knows."""

    TICK = 0.25

    def __init__(self):
        self._databases: dict[Engine, _Database] = {}
        self._lock = threading.Lock()
        self._working = threading.Lock()  # held while a beat reads or writes the databases
        self._thread: threading.Thread | None = None
        os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        """A forked worker (gunicorn with preload) has no thread of its parent's: it starts its own."""
        self._lock = threading.Lock()
        self._working = threading.Lock()
        self._thread = None
        if any(db.watched for db in self._databases.values()):
            self._start()

    def watch(self, engine: Engine, sweep: Callable[[Session], object], interval: float) -> None:
        """Sweep this database every `interval` seconds for as long as the process lives: answers
        left running by a process that died end within a minute even when nothing else runs."""
        with self._lock:
            database = self._databases.setdefault(engine, _Database(sweep, interval))
            database.watched = True
            self._start()

    def add(
        self,
        engine: Engine,
        message_id: str,
        sweep: Callable[[Session], object],
        interval: float = HEARTBEAT_SECONDS,
        on_stop: Callable[[str], object] | None = None,
    ) -> None:
        """Keep this answer alive every `interval` seconds; `sweep` ends the stale answers of its
        database as the thread goes; `on_stop` hears of a stop asked for elsewhere (STOP_SECONDS)."""
        with self._lock:
            database = self._databases.setdefault(engine, _Database(sweep, interval))
            database.interval = min(database.interval, interval)
            database.on_stop = on_stop or database.on_stop
            database.running.add(message_id)
            self._start()

    def discard(self, engine: Engine, message_id: str) -> None:
        with self._lock:
            database = self._databases.get(engine)
            if database is None:
                return
            database.running.discard(message_id)
            if not database.running and not database.watched:
                del self._databases[engine]  # a test's database: forgotten with its last answer

    def forget(self, engine: Engine) -> None:
        """Stop working on this database, and wait for a beat that is using it now to end: its app
        is being torn down (tests make and drop one per test), and a connection the thread opened
        after the engine was disposed would be left open in a pool nobody closes."""
        with self._lock:
            self._databases.pop(engine, None)
        with self._working:
            pass

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._beat, name="answer-heartbeats", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while True:
            time.sleep(self.TICK)
            with self._working:  # what is due is chosen and done in one piece (forget waits for it)
                now = time.monotonic()
                with self._lock:
                    due = [
                        (engine, list(db.running), db.sweep)
                        for engine, db in self._databases.items()
                        if now - db.last_beat >= db.interval
                    ]
                    for engine, _ids, _sweep in due:
                        self._databases[engine].last_beat = now
                    looks = [
                        (engine, list(db.running), db.on_stop)
                        for engine, db in self._databases.items()
                        if db.running and db.on_stop and now - db.last_look >= STOP_SECONDS
                    ]
                    for engine, _ids, _on_stop in looks:
                        self._databases[engine].last_look = now
                self._look_for_stops(looks)
                self._keep_alive(due)

    @staticmethod
    def _look_for_stops(looks: list) -> None:
        for engine, ids, on_stop in looks:
            try:
                with engine.connect() as connection:  # a read of a few indexed rows, no lock
                    stopped = connection.scalars(
                        select(ChatMessage.id).where(
                            ChatMessage.id.in_(ids), ChatMessage.cancel_requested.is_(True)
                        )
                    ).all()
                for message_id in stopped:
                    on_stop(message_id)
            except Exception as exc:
                log.warning("stop_check_failed", error_type=type(exc).__name__)

    @staticmethod
    def _keep_alive(due: list) -> None:
        for engine, ids, sweep in due:
            try:
                with write_transaction(engine) as session:
                    if ids:
                        session.execute(
                            update(ChatMessage)
                            .where(ChatMessage.id.in_(ids), ChatMessage.status == MessageStatus.RUNNING)
                            .values(heartbeat_at=utcnow())
                        )
                    sweep(session)
            except Exception as exc:  # a busy or vanished database: try again next beat
                log.warning("heartbeat_failed", error_type=type(exc).__name__)


# One per process: every app in it (tests make many) shares the thread.
HEARTBEATS = Heartbeats()


class Recovery:
    """Ends answers whose process died, settling each call left between approval and result."""

    def __init__(self, registry: ToolRegistry, calls: CallRunner, stale_after: float):
        # No app context here: the heartbeat thread calls in with a session of the right database.
        self.registry = registry
        self.calls = calls
        self.stale_after = stale_after

    def blocking(self, session: Session, conversation_id: str) -> ChatMessage | None:
        """The answer a new message must wait for, if any: the conversation's latest answer while it
        runs or waits for its requester's confirmation. A booking waiting for a manager's sign-off
        holds nothing: the conversation goes on meanwhile, and when the sign-off comes the answer it
        belongs to resumes at its own place (decisions.py), holding nothing either. A latest answer
        whose process died is ended first: it no longer blocks."""
        latest = session.scalars(
            select(ChatMessage)
            .where(ChatMessage.conversation_id == conversation_id, ChatMessage.role == "assistant")
            .order_by(ChatMessage.created_seq.desc())
            .limit(1)
            .execution_options(populate_existing=True)
        ).first()
        if latest is None or latest.status not in (
            MessageStatus.RUNNING,
            MessageStatus.AWAITING_CONFIRMATION,
        ):
            return None
        if is_stale(latest, self.stale_after) and self.end_stale(session, [latest.id]):
            return None
        return latest

    def seen(self, session: Session, message: ChatMessage) -> None:
        """Someone looks at an answer: if its process died, or its sign-off expired, it is ended
        first, so they see it as it is."""
        if is_stale(message, self.stale_after):
            begin_write(session)
            self.end_stale(session, [message.id])
            session.commit()
        elif message.status == MessageStatus.AWAITING_SIGNOFF and approvals.expired(session, message.id):
            begin_write(session)
            self.expire_signoffs(session)
            session.commit()
            session.refresh(message)

    def end_stale(self, session: Session, message_ids: list[str] | None = None) -> int:
        """End running answers whose heartbeat stopped (these, or any): `failed` (`interrupted`).
        Runs in the caller's write transaction; returns how many it ended."""
        ended = 0
        for message_id in stale_answers(session, self.stale_after, message_ids):
            message = session.get(ChatMessage, message_id)
            self.settle_unfinished(session, message)
            message.status = MessageStatus.FAILED.value
            message.error_code = "interrupted"
            message.content = INTERRUPTED.get(message.language, INTERRUPTED["en"])
            message.completed_at = utcnow()
            ended += 1
        if ended:
            log.warning("answers_interrupted", count=ended)
        session.flush()
        return ended

    def expire_due(self, session: Session) -> None:
        """Expire the sign-offs past their time, if any (only a read when none is), and commit: what
        a person is about to be shown is as it stands."""
        if approvals.expired(session):
            with writing(session):
                self.expire_signoffs(session)
                session.commit()

    def expire_signoffs(self, session: Session) -> int:
        """Sign-offs nobody gave in time: the booking is declined (nothing booked) and an answer
        left with nothing else to wait for ends with a sentence saying so, without asking the model.
        Runs in the caller's write transaction; returns how many expired."""
        ended = approvals.expired(session)
        for signoff in ended:
            signoff.status = SignoffStatus.EXPIRED.value
            signoff.decided_at = signoff.expires_at  # nobody decided: it ran out then
            record = signoff.call
            record.status, record.error_type = CallStatus.DECLINED.value, "Expired"
            record.content = dumps(
                {"error": {"type": "Expired", "message": "not signed off in time: not booked"}}
            )
            message = session.get(ChatMessage, signoff.message_id)
            still = any(c.status == CallStatus.AWAITING_SIGNOFF for r in message.rounds for c in r.calls)
            if message.status == MessageStatus.AWAITING_SIGNOFF and not still:
                message.status = MessageStatus.COMPLETED.value
                message.content = SIGNOFF_EXPIRED.get(message.language, SIGNOFF_EXPIRED["en"])
                message.completed_at = utcnow()
        if ended:
            log.info("signoffs_expired", count=len(ended))
            session.flush()
        return len(ended)

    def settle_unfinished(self, session: Session, message: ChatMessage) -> None:
        """A running answer's calls still marked pending were approved and may have run before the
        answer broke off: what the ledger says happened is recorded; the rest did not run."""
        if message.status != MessageStatus.RUNNING:
            return  # waiting for a person: its pending calls are theirs to decide
        user = session.get(User, message.conversation.user_id)
        for record in (c for r in message.rounds for c in r.calls):
            if record.status == CallStatus.AWAITING_SIGNOFF:
                # Asked for while the answer still ran, and it never said it waits: nobody will
                # be told of a decision, so it is withdrawn, not booked.
                if record.signoff is not None and record.signoff.status == SignoffStatus.WAITING:
                    record.signoff.status = SignoffStatus.WITHDRAWN.value
                    record.signoff.decided_at = record.signoff.seen_at = utcnow()
                record.status, record.error_type = CallStatus.DECLINED.value, "Interrupted"
                record.content = dumps(
                    {"error": {"type": "Interrupted", "message": "not booked: the answer was interrupted"}}
                )
                continue
            if record.status != CallStatus.PENDING_CONFIRMATION:
                continue
            tool = self.registry.get(record.name)
            done = None
            if tool is not None:
                context = ToolContext.of_answer(
                    session, session.get_bind(), user, message, tool_call_id=record.call_id
                )
                try:
                    done = tool.recorded_outcome(json.loads(record.arguments), context)
                except (ToolError, ValueError):
                    done = None
            if done is not None:
                record.status, record.content = CallStatus.SUCCESS.value, self.calls.result(done).content
            else:
                record.status, record.error_type = CallStatus.ERROR.value, "Interrupted"
                record.content = dumps(
                    {"error": {"type": "Interrupted", "message": "not executed: the answer was interrupted"}}
                )
