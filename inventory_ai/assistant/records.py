"""What the loop (manager.py) writes for a turn: the question and its answer, a round with its calls,
the model's usage, the answer's ending.

Core statements, one INSERT per table (database.insert_rows), with the objects handed back to the
session as if it had loaded them (database.inserted): per object, the ORM's unit of work cost several
times the write (docs/benchmarks.md, the loop). Each function runs inside the caller's write
transaction; the caller commits.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, inspect, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from inventory_ai.assistant.asking import ModelUsage
from inventory_ai.assistant.calls import MAX_ARGUMENT_CHARS, CallOutcome, PreparedCall
from inventory_ai.database import insert_rows, inserted
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

_messages = ChatMessage.__table__
ADD_TOKENS = (
    _messages.update()
    .where(_messages.c.id == bindparam("message"))
    .values(
        input_tokens=_messages.c.input_tokens + bindparam("more_in"),
        output_tokens=_messages.c.output_tokens + bindparam("more_out"),
    )
)
# Ends a running answer, unless something else (a stale sweep) ended it first.
END_ANSWER = (
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


def new_conversation(session: Session, user_id: int, title: str) -> Conversation:
    now = utcnow()
    [conversation] = inserted(
        session, Conversation, [{"id": new_id(), "user_id": user_id, "title": title, "created_at": now,
                                 "updated_at": now}]
    )  # fmt: skip
    set_committed_value(conversation, "messages", [])  # known empty: not asked for
    return conversation


def question_and_answer(
    session: Session, conversation: Conversation, seq: int, text: str, language: str
) -> tuple[ChatMessage, ChatMessage]:
    """The user's message and the answer that starts `running`, after sequence number `seq`."""
    now = utcnow()
    question, answer = inserted(
        session,
        ChatMessage,
        [
            {"conversation_id": conversation.id, "created_seq": seq + 1, "role": "user", "content": text,
             "language": language, "created_at": now},
            {"conversation_id": conversation.id, "created_seq": seq + 2, "role": "assistant",
             "status": MessageStatus.RUNNING.value, "language": language, "heartbeat_at": now, "created_at": now},
        ],
    )  # fmt: skip
    set_committed_value(answer, "rounds", [])  # known empty: the loop does not ask the database
    for message in (question, answer):  # both ways, as a load would: nothing is asked again
        set_committed_value(message, "conversation", conversation)
    if "messages" not in inspect(conversation).unloaded:  # the loaded history stays true
        set_committed_value(conversation, "messages", [*conversation.messages, question, answer])
    if seq:  # an existing conversation moves to the top of the list
        session.execute(update(Conversation).where(Conversation.id == conversation.id).values(updated_at=now))
        set_committed_value(conversation, "updated_at", now)
    return question, answer


def round_of_calls(
    session: Session,
    message: ChatMessage,
    position: int,
    assistant_response: str | None,
    duration_ms: int,
    prepared: list[PreparedCall],
    outcomes: list[CallOutcome],
) -> list[ToolCallRecord]:
    """The round as it completed, one record per call (a pending one without content yet)."""
    [stored] = inserted(session, ToolRound, [{
        "message_id": message.id, "position": position, "assistant_response": assistant_response,
        "started_at": utcnow(), "duration_ms": duration_ms,
    }])  # fmt: skip
    records = inserted(session, ToolCallRecord, [
        {"round_id": stored.id, "position": index, "call_id": p.call_id, "model_call_id": p.call.id[:64] or p.call_id,
         "name": p.call.name[:64], "arguments": p.call.arguments[:MAX_ARGUMENT_CHARS], "description": p.description,
         "status": outcome.status, "error_type": outcome.error_type, "duration_ms": outcome.duration_ms,
         "content": None if outcome.status == CallStatus.PENDING_CONFIRMATION else outcome.content}
        for index, (p, outcome) in enumerate(zip(prepared, outcomes, strict=True))
    ])  # fmt: skip
    set_committed_value(stored, "calls", records)
    set_committed_value(message, "rounds", [*message.rounds, stored])
    return records


def usage(
    session: Session, message: ChatMessage, calls: list[ModelUsage], totals: bool = True
) -> tuple[int, int]:
    """The model calls' usage rows, and (unless the caller adds them with its own update, as the
    ending does) the answer's token totals. Returns the tokens added."""
    if not calls:
        return 0, 0
    insert_rows(session, ModelCall, [vars(c) for c in calls])
    added = (sum(c.input_tokens or 0 for c in calls), sum(c.output_tokens or 0 for c in calls))
    if totals:
        add_tokens(session, message, *added)
    return added


def add_tokens(session: Session, message: ChatMessage, more_in: int, more_out: int) -> None:
    session.connection().execute(
        ADD_TOKENS, {"message": message.id, "more_in": more_in, "more_out": more_out}
    )
    set_committed_value(message, "input_tokens", message.input_tokens + more_in)
    set_committed_value(message, "output_tokens", message.output_tokens + more_out)


def ending(
    session: Session, message: ChatMessage, status: str, text: str, error_code: str | None,
    model: str | None, more_in: int, more_out: int,
) -> bool:  # fmt: skip
    """End a running answer as told, its tokens added; False if something else ended it first (the
    caller then reads it back)."""
    ended_at: datetime = utcnow()
    ended = session.connection().execute(
        END_ANSWER,
        {"message": message.id, "new_content": text, "new_status": status, "new_error": error_code,
         "ended_at": ended_at, "new_model": model, "more_in": more_in, "more_out": more_out},
    )  # fmt: skip
    if ended.rowcount != 1:
        add_tokens(session, message, more_in, more_out)
        return False
    for key, value in (("content", text), ("status", status), ("error_code", error_code),
                       ("completed_at", ended_at), ("model", model),
                       ("input_tokens", message.input_tokens + more_in),
                       ("output_tokens", message.output_tokens + more_out)):  # fmt: skip
        set_committed_value(message, key, value)  # as written: nothing to read back
    return True
