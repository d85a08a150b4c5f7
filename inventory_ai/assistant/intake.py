"""A staff message taken in: cleaned and screened once, then stored with the answer that starts
`running`, and committed before any model call (if the model fails, nothing the user typed is
lost). A conversation that is not the caller's is "not found"; one whose latest answer is still
running or waiting for its requester's confirmation takes no new message (409) unless that answer's
process died (recovery.blocking); a booking waiting for a manager's sign-off holds nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.assistant import answer_store
from inventory_ai.assistant.answering import AnswerRef
from inventory_ai.assistant.recovery import Recovery
from inventory_ai.database import direct_write, writing
from inventory_ai.errors import Conflict, InvalidInput
from inventory_ai.models import ChatMessage, Conversation, MessageStatus, User
from inventory_ai.observability import FLAGGED
from inventory_ai.services import audit, conversations, sites
from inventory_ai.services.screening import screen
from inventory_ai.services.sites import Sites
from inventory_ai.statements import Direct
from inventory_ai.text import question_language, storable

MAX_MESSAGE_CHARS = 4000
FLAGGED_ACTION = "prompt_injection_flagged"


def take_message(
    session: Session,
    user: User,
    text: str,
    conversation_id: str | None,
    recovery: Recovery,
    page_language: str | None = None,
) -> AnswerRef:
    text = storable((text or "").strip())  # the one cleaning of a chat message's text
    if not text:
        raise InvalidInput("message is empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(f"message is {len(text)} characters; the limit is {MAX_MESSAGE_CHARS}")
    conversation_id = conversation_id or None  # "" starts a new conversation, as no id does
    # Worked out before the write lock is taken: writers wait for each other (writer_turns.WriterTurns),
    # so only the reads that decide and the writes themselves happen while it is held.
    # The answer follows the question's language; a mixed one, the page's (text.question_language).
    language = question_language(text, page_language or user.language or "zh")
    screening = screen(text)  # the one screening: the verdict goes with the answer (AnswerRef.flagged)
    rows = answer_store.intake(user.id, text, language, conversation_id, screening.flagged)
    flagged = []
    if screening.flagged:  # a signal: audited, and the model is reminded (prompts.system_prompt)
        flagged.append(audit.event(
            FLAGGED_ACTION, "flagged", user_id=user.id, role=user.role,
            conversation_id=rows.conversation_id, message_id=rows.question["id"],
            arguments={"reasons": list(screening.reasons)},
        ))  # fmt: skip
    if conversation_id is None:
        # A new conversation reads nothing but the warehouses: its transaction outside the Session,
        # as the round's (database.direct_write), which costs a third of the Session's around it.
        conversation = None
        with direct_write(session) as direct:
            mine = _write(direct, user, rows, 0, flagged)  # given once committed
    else:
        with writing(session):
            conversation, seq = _conversation_for(session, user, conversation_id, recovery)
            mine = _write(session, user, rows, seq, flagged)
            session.commit()
    if flagged:
        FLAGGED.inc()
    answer = answer_store.adopt_intake(session, rows, conversation)
    return AnswerRef(answer.conversation_id, answer.id, screening.flagged, mine())


def _write(
    where: Session | Direct, user: User, rows: answer_store.Intake, seq: int, flagged: list
) -> Callable[[], Sites]:
    """The question, its answer and the audit events written after sequence number `seq`; returns
    what gives the warehouses the run's tools are scoped to once committed, read here rather than in
    a transaction of their own when the run starts, moments later in the same request (issue 34: as
    stored now). In a new conversation's pipelined write (PostgreSQL) the read is queued after the
    writes and answered with the COMMIT: the intake waits once (sites.of_user_at_commit)."""
    answer_store.write_intake(where, rows, seq)
    audit.write(where, flagged)
    return sites.of_user_at_commit(where, user)


def _conversation_for(
    session: Session, user: User, conversation_id: str, recovery: Recovery
) -> tuple[Conversation, int]:
    """The conversation a new message goes into (free to take it), and its last sequence number."""
    conversation = conversations.own_conversation(session, user, conversation_id)
    waiting = recovery.blocking(session, conversation.id)
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


def was_flagged(session: Session, answer: ChatMessage) -> bool:
    """The intake's verdict on the question `answer` answers, as its row keeps it: a run resumed in
    another request reads it rather than screening the text again."""
    asked = (
        select(ChatMessage.flagged)
        .where(
            ChatMessage.conversation_id == answer.conversation_id,
            ChatMessage.role == "user",
            ChatMessage.created_seq < answer.created_seq,
        )
        .order_by(ChatMessage.created_seq.desc())
        .limit(1)
    )
    return bool(session.scalar(asked))
