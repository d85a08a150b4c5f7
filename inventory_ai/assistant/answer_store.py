"""What the loop (manager.py) writes for a turn: the question and its answer, a round with its calls,
the model's usage, the answer's ending.

Core statements, one INSERT per table (database.insert_rows), with the objects handed back to the
session as if it had loaded them (database.adopted): per object, the ORM's unit of work cost several
times the write (docs/benchmarks.md, the loop). On SQLite a write transaction holds the one write
lock every worker shares, so the question and the round are written in three steps: their rows made
before the transaction (`intake`, `round_rows`), written inside it (`write_…`), and handed to the
session after the commit (`adopt_…`). The write functions run inside the caller's write
transaction, the session's or, for the round and the ending, one on a pooled connection of its own
(database.direct_write: the Session's transaction cost more than the writes); the caller commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, exists, func, inspect, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from inventory_ai.assistant.model_chain import ModelUsage
from inventory_ai.assistant.tool_calls import MAX_ARGUMENT_CHARS, CallOutcome, PreparedCall
from inventory_ai.database import adopted, as_written, filled, insert_rows, resolved
from inventory_ai.models import (
    CallStatus,
    ChatMessage,
    Conversation,
    MessageStatus,
    ModelCall,
    ToolCallRecord,
    ToolRound,
    new_id,
    utcnow,
)
from inventory_ai.services import conversations
from inventory_ai.statements import Direct, Prepared

_messages = ChatMessage.__table__
_conversations = Conversation.__table__
# An existing conversation moves to the top of the list.
TOUCH_CONVERSATION = Prepared(
    _conversations.update()
    .where(_conversations.c.id == bindparam("conversation"))
    .values(updated_at=bindparam("now"))
)
ADD_TOKENS = Prepared(
    _messages.update()
    .where(_messages.c.id == bindparam("message"))
    .values(
        input_tokens=_messages.c.input_tokens + bindparam("more_in"),
        output_tokens=_messages.c.output_tokens + bindparam("more_out"),
    )
)
# Ends a running answer, unless something else (a stale sweep) ended it first.
END_ANSWER = Prepared(
    _messages.update()
    .where(_messages.c.id == bindparam("message"), _messages.c.status == MessageStatus.RUNNING.value)
    .values(
        content=bindparam("new_content"),
        status=bindparam("new_status"),
        error_code=bindparam("new_error"),
        completed_at=bindparam("ended_at"),
        model=bindparam("new_model"),
        input_tokens=_messages.c.input_tokens + bindparam("more_in"),
        output_tokens=_messages.c.output_tokens + bindparam("more_out"),
    )
)

# PostgreSQL: END_ANSWER, and ADD_TOKENS only where it ended nothing, decided in one statement, so
# that the ending's pipelined write need not wait for END_ANSWER's count before its COMMIT. The same
# outcome as the two in turn: `added` runs only if `ended` matched no row, and on a row another
# transaction changed meanwhile each UPDATE waits for it and rechecks its condition on what that one
# committed (READ COMMITTED), as the two statements would. Gives (ended, added): (1, 0) ended here,
# (0, 1) ended elsewhere and the tokens added, (0, 0) the answer is gone.
_ended = END_ANSWER.statement.returning(_messages.c.id).cte("ended")
_added = ADD_TOKENS.statement.where(~exists(select(_ended.c.id))).returning(_messages.c.id).cte("added")
END_ANSWER_OR_ADD_TOKENS = Prepared(
    select(
        select(func.count()).select_from(_ended).scalar_subquery(),
        select(func.count()).select_from(_added).scalar_subquery(),
    )
)


@dataclass
class Intake:
    """A question and the answer that starts `running`, as rows: ids given before the write lock is
    taken, sequence numbers and times while it is held."""

    conversation: dict | None  # a new conversation's row; None when the question goes into one that exists
    question: dict
    answer: dict

    @property
    def conversation_id(self) -> str:
        return self.question["conversation_id"]


def intake(
    user_id: int, text: str, language: str, conversation_id: str | None, flagged: bool = False
) -> Intake:
    """The rows for a question (with its screening verdict), in a new conversation unless one is
    given. No database work."""
    conversation = None
    if conversation_id is None:
        conversation = {"id": new_id(), "user_id": user_id, "title": conversations.title_for(text)}
        conversation_id = conversation["id"]
    question, answer = filled(ChatMessage, [
        {"conversation_id": conversation_id, "role": "user", "content": text, "language": language,
         "flagged": flagged},
        {"conversation_id": conversation_id, "role": "assistant", "status": MessageStatus.RUNNING.value,
         "language": language},
    ])  # fmt: skip
    return Intake(conversation, question, answer)


def write_intake(where: Session | Direct, rows: Intake, seq: int) -> None:
    """The question and its answer after sequence number `seq` of their conversation, stamped now."""
    now = utcnow()
    rows.question["created_seq"], rows.answer["created_seq"] = seq + 1, seq + 2
    rows.question["created_at"] = rows.answer["created_at"] = rows.answer["heartbeat_at"] = now
    if rows.conversation is not None:
        rows.conversation["created_at"] = rows.conversation["updated_at"] = now
        insert_rows(where, Conversation, [rows.conversation])
    else:
        TOUCH_CONVERSATION.execute(where, [{"conversation": rows.conversation_id, "now": now}])
    insert_rows(where, ChatMessage, [rows.question, rows.answer], made_filled=True)


def adopt_intake(session: Session, rows: Intake, conversation: Conversation | None) -> ChatMessage:
    """After the commit: the written rows as the session's objects, linked both ways as a load
    would link them (nothing is asked again). Returns the answer."""
    session = resolved(session)
    question, answer = adopted(session, ChatMessage, [rows.question, rows.answer])
    if conversation is None:
        [conversation] = adopted(session, Conversation, [rows.conversation])
        set_committed_value(conversation, "messages", [question, answer])  # known: not asked for
    else:
        as_written(conversation, {"updated_at": rows.question["created_at"]})
        if "messages" not in inspect(conversation).unloaded:  # the loaded history stays true
            set_committed_value(conversation, "messages", [*conversation.messages, question, answer])
    set_committed_value(answer, "rounds", [])  # known empty: the loop does not ask the database
    for message in (question, answer):  # just attached, nothing changed: into their dicts (as_written)
        as_written(message, {"conversation": conversation})
    return answer


@dataclass
class RoundRows:
    """A round of tool calls as it completed, one row per call (a pending one without content yet)."""

    round: dict
    calls: list[dict]


def round_rows(
    message: ChatMessage,
    position: int,
    assistant_response: str | None,
    prepared: list[PreparedCall],
    outcomes: list[CallOutcome],
) -> RoundRows:
    """The rows for a round. No database work."""
    [stored] = filled(ToolRound, [{
        "message_id": message.id, "position": position, "assistant_response": assistant_response,
    }])  # fmt: skip
    calls = filled(ToolCallRecord, [
        {"position": index, "call_id": p.call_id, "model_call_id": p.call.id[:64] or p.call_id,
         "name": p.call.name[:64], "arguments": p.call.arguments[:MAX_ARGUMENT_CHARS], "description": p.description,
         "status": outcome.status, "error_type": outcome.error_type, "duration_ms": outcome.duration_ms,
         "content": None if outcome.status == CallStatus.PENDING_CONFIRMATION else outcome.content}
        for index, (p, outcome) in enumerate(zip(prepared, outcomes, strict=True))
    ])  # fmt: skip
    return RoundRows(stored, calls)


def write_round(where: Session | Direct, rows: RoundRows, started: float) -> None:
    """The round, stamped now and timed from `started` (time.monotonic()) to now, then its calls
    under the round's new id."""
    rows.round["started_at"] = utcnow()
    rows.round["duration_ms"] = int((time.monotonic() - started) * 1000)
    [rows.round] = insert_rows(where, ToolRound, [rows.round], with_ids=True, made_filled=True)
    for call in rows.calls:
        call["round_id"] = rows.round["id"]
    rows.calls = insert_rows(where, ToolCallRecord, rows.calls, with_ids=True, made_filled=True)


def adopt_round(session: Session, message: ChatMessage, rows: RoundRows) -> list[ToolCallRecord]:
    """After the commit: the round as the session's objects, on the answer's rounds. Returns the calls."""
    session = resolved(session)
    [stored] = adopted(session, ToolRound, [rows.round])
    calls = adopted(session, ToolCallRecord, rows.calls)
    set_committed_value(stored, "calls", calls)
    set_committed_value(message, "rounds", [*message.rounds, stored])
    return calls


def usage(
    where: Session | Direct, message: ChatMessage, calls: list[ModelUsage], totals: bool = True
) -> tuple[int, int]:
    """The model calls' usage rows, and (unless the caller adds them with its own update, as the
    ending does) the answer's token totals. Returns the tokens added."""
    if not calls:
        return 0, 0
    insert_rows(where, ModelCall, [vars(c) for c in calls])
    added = (sum(c.input_tokens or 0 for c in calls), sum(c.output_tokens or 0 for c in calls))
    if totals:
        add_tokens(where, message, *added)
    return added


def add_tokens(where: Session | Direct, message: ChatMessage, more_in: int, more_out: int) -> None:
    ADD_TOKENS.execute(where, [{"message": message.id, "more_in": more_in, "more_out": more_out}])
    as_written(message, {
        "input_tokens": message.input_tokens + more_in, "output_tokens": message.output_tokens + more_out,
    })  # fmt: skip


def ending(
    where: Session | Direct, message: ChatMessage, status: str, text: str, error_code: str | None,
    model: str | None, more_in: int, more_out: int,
) -> Callable[[], bool]:  # fmt: skip
    """End a running answer as told, its tokens added. Returns what tells, once the caller's
    transaction has committed, whether it ended it: False if something else ended it first (the
    caller then reads it back); the answer's object says what was written then. In a pipelined
    direct transaction (PostgreSQL) one statement decides both UPDATEs, answered with the COMMIT
    (END_ANSWER_OR_ADD_TOKENS); elsewhere END_ANSWER's count decides whether ADD_TOKENS follows."""
    ended_at: datetime = utcnow()
    values = {
        "message": message.id, "new_content": text, "new_status": status, "new_error": error_code,
        "ended_at": ended_at, "new_model": model, "more_in": more_in, "more_out": more_out,
    }  # fmt: skip
    written = {
        "content": text, "status": status, "error_code": error_code, "completed_at": ended_at,
        "model": model, "input_tokens": message.input_tokens + more_in,
        "output_tokens": message.output_tokens + more_out,
    }  # fmt: skip
    if isinstance(where, Direct) and where.pipeline is not None:
        counts = END_ANSWER_OR_ADD_TOKENS.rows_at_commit(where, values)

        def told() -> bool:
            [(ended, _added)] = counts()
            as_written(message, written if ended == 1 else {
                "input_tokens": written["input_tokens"], "output_tokens": written["output_tokens"],
            })  # fmt: skip
            return ended == 1

        return told
    ended = END_ANSWER.execute(where, [values], matched=True) == 1
    if ended:
        as_written(message, written)
    else:
        add_tokens(where, message, more_in, more_out)
    return lambda: ended
