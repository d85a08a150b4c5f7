"""Conversations as their owner and the API see them: who owns what, the recent list, search,
renaming and deleting, transcripts, and the title a new conversation gets.

A conversation or answer that is not the caller's looks exactly like a missing one (NotFound), and so
does one its owner deleted: deleting is soft (`deleted_at`), so the audit trail and the admin
conversations API keep it, but its owner sees it nowhere.

When an admin takes a warehouse away from a person (users.warehouses_narrowed_at), the conversations
they began before then close the same way: they may hold that warehouse's figures, in answers and in
the tool results the model would be sent again. Bookings waiting in them are still decided.
"""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import ColumnElement, Select, and_, or_, select, true
from sqlalchemy.orm import Session, object_session

from inventory_ai import strict_json
from inventory_ai.errors import Conflict, InvalidInput, NotFound
from inventory_ai.models import CallStatus, ChatMessage, Conversation, MessageStatus, User, utcnow
from inventory_ai.models.chat import ToolCallRecord, ToolRound
from inventory_ai.services import approvals, audit
from inventory_ai.text import storable

TITLE_MAX_CHARS = 200
SEARCH_MAX_CHARS = 200


def open_to(session: Session, user: User) -> ColumnElement[bool]:
    """The conversations a person may open: their own, not deleted, begun after their warehouses
    last narrowed (read afresh, as their warehouses are: a change applies on their next request)."""
    narrowed = session.scalar(select(User.warehouses_narrowed_at).where(User.id == user.id))
    return and_(
        Conversation.user_id == user.id,
        Conversation.deleted_at.is_(None),
        true() if narrowed is None else Conversation.created_at >= narrowed,
    )


def calls_in(session: Session, user: User) -> Select:
    """The tool calls in the conversations a person may open (`open_to`), each with the answer it
    is in (ToolCallRecord, ChatMessage): a query for the caller to narrow."""
    return (
        select(ToolCallRecord, ChatMessage)
        .join(ToolRound, ToolCallRecord.round_id == ToolRound.id)
        .join(ChatMessage, ToolRound.message_id == ChatMessage.id)
        .join(Conversation, ChatMessage.conversation_id == Conversation.id)
        .where(open_to(session, user))
    )


def is_open(session: Session, user: User, conversation_id: str) -> bool:
    return (
        session.scalar(
            select(Conversation.id).where(Conversation.id == conversation_id, open_to(session, user))
        )
        is not None
    )


def own_conversation(session: Session, user: User, conversation_id: str) -> Conversation:
    conversation = session.scalar(
        select(Conversation).where(Conversation.id == conversation_id, open_to(session, user))
    )
    if conversation is None:
        raise NotFound("no such conversation")
    return conversation


def own_answer(session: Session, user: User, message_id: str) -> ChatMessage:
    message = session.scalar(
        select(ChatMessage)
        .join(Conversation, ChatMessage.conversation_id == Conversation.id)
        .where(ChatMessage.id == message_id, ChatMessage.role == "assistant", open_to(session, user))
    )
    if message is None:
        raise NotFound("no such message")
    return message


def recent(session: Session, user: User, limit: int = 100) -> list[Conversation]:
    return list(
        session.scalars(
            select(Conversation)
            .where(open_to(session, user))
            .order_by(Conversation.updated_at.desc())
            .limit(limit)
        )
    )


def search(session: Session, user: User, text: str, limit: int = 50) -> list[tuple[Conversation, str]]:
    """The user's conversations whose title or any message (a question or an answer) holds `text`,
    most recently used first, each with the words around its first match in a message ("" when
    only the title matched). Case-insensitive for Latin letters."""
    text = " ".join(storable(text or "").split())[:SEARCH_MAX_CHARS]
    if not text:
        return [(c, "") for c in recent(session, user, limit)]
    pattern = "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"
    in_messages = (
        select(ChatMessage.conversation_id)
        .join(Conversation, ChatMessage.conversation_id == Conversation.id)
        .where(Conversation.user_id == user.id, ChatMessage.content.ilike(pattern, escape="\\"))
    )
    found = list(
        session.scalars(
            select(Conversation)
            .where(
                open_to(session, user),
                or_(Conversation.title.ilike(pattern, escape="\\"), Conversation.id.in_(in_messages)),
            )
            .order_by(Conversation.updated_at.desc())
            .limit(limit)
        )
    )
    snippets: dict[str, str] = {}
    if found:
        rows = session.execute(
            select(ChatMessage.conversation_id, ChatMessage.content)
            .where(
                ChatMessage.conversation_id.in_([c.id for c in found]),
                ChatMessage.content.ilike(pattern, escape="\\"),
            )
            .order_by(ChatMessage.created_seq)
        )
        for conversation_id, content in rows:
            snippets.setdefault(conversation_id, _around(content, text))
    return [(c, snippets.get(c.id, "")) for c in found]


def _around(content: str, text: str, width: int = 30) -> str:
    """The words around the first match of `text` in `content`, on one line."""
    flat = " ".join(content.split())
    at = flat.lower().find(text.lower())
    if at < 0:
        return flat[: 2 * width]
    start, end = max(0, at - width), at + len(text) + width
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


def rename(session: Session, user: User, conversation_id: str, title: str) -> Conversation:
    conversation = own_conversation(session, user, conversation_id)
    title = " ".join(storable(title or "").split())
    if not title:
        raise InvalidInput("the title is empty", {"fields": {"title": ["Give the conversation a title."]}})
    if len(title) > TITLE_MAX_CHARS:
        raise InvalidInput(
            f"the title is {len(title)} characters; the limit is {TITLE_MAX_CHARS}",
            {"fields": {"title": [f"At most {TITLE_MAX_CHARS} characters."]}},
        )
    conversation.title = title
    audit.record(
        session, "conversation_renamed", "success", user_id=user.id, role=user.role,
        conversation_id=conversation.id, arguments={"title": title},
    )  # fmt: skip
    session.commit()
    return conversation


def delete(session: Session, user: User, conversation_id: str) -> None:
    """Gone for its owner; kept for the audit and admins. An answer still running or waiting for
    the owner's decision must end first (stop it, or decide): nothing is left waiting unseen."""
    conversation = own_conversation(session, user, conversation_id)
    unfinished = session.scalar(
        select(ChatMessage.id).where(
            ChatMessage.conversation_id == conversation.id,
            ChatMessage.status.in_([MessageStatus.RUNNING, MessageStatus.AWAITING_CONFIRMATION]),
        )
    )
    if unfinished is not None:
        raise Conflict(
            "this conversation has an answer still running or waiting for your decision: "
            "stop or decide it first",
            {"message_id": unfinished},
        )
    conversation.deleted_at = utcnow()
    audit.record(
        session, "conversation_deleted", "success", user_id=user.id, role=user.role,
        conversation_id=conversation.id, arguments={"title": conversation.title},
    )  # fmt: skip
    session.commit()


# A request's courtesies and openers say nothing about what it is about.
_OPENERS = re.compile(
    r"^(?:(?:你好|您好|请问|请|帮我|帮忙|麻烦你|麻烦|能不能|能否|可以|可不可以|我想|我要|给我)[，,\s]*"
    r"|(?:hi|hello|hey|please|pls|can you|could you|would you|will you|i want to|i'd like to)\b[,\s]*)+",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[。！？!?；;\n]")
TITLE_WIDTH = 32  # a sidebar line: a CJK character is two of these


def title_for(question: str) -> str:
    """A new conversation's title: what its first question is about, short enough for one line of
    the sidebar. The first sentence without its courtesies (请, 帮我, please, can you), at most
    TITLE_WIDTH wide, cut at a word and marked with … when cut. Made from the words asked, not by a
    model: no extra call, nothing said that was not asked."""
    text = " ".join((question or "").split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip() or text
    core = _OPENERS.sub("", first).strip(" ，,。.：:?？!！") or first.strip()
    if core[:1].isascii():
        core = core[:1].upper() + core[1:]
    return _fit(core, TITLE_WIDTH)


def _width(char: str) -> int:
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _fit(text: str, width: int) -> str:
    if sum(_width(c) for c in text) <= width:
        return text
    used, cut = 0, 0
    for i, char in enumerate(text):
        used += _width(char)
        if used > width - 1:
            break
        cut = i + 1
    head = text[:cut]
    clause = max(head.rfind("，"), head.rfind(","), head.rfind("、"))
    space = head.rfind(" ")
    if clause > cut // 3:  # a whole clause rather than half of the next one
        head = head[:clause]
    elif space > cut // 2:  # Latin words: not mid-word
        head = head[:space]
    return head.rstrip(" ，,、") + "…"


def transcript(conversation: Conversation, effects=None) -> list[dict]:
    """Every message in order: the user's as asked, each answer as `message_view` shows it
    (`effects(answer)`: its waiting calls' effects, call_id -> effect)."""
    return [
        {"role": "user", "id": m.id, "content": m.content}
        if m.role == "user"
        else {"role": "assistant", **message_view(m, effects(m) if effects else None)}
        for m in conversation.messages
    ]


def message_view(message: ChatMessage, effects: dict[str, dict] | None = None) -> dict:
    """An answer as the API shows it; `effects` (call_id -> what the call would do, computed for
    the viewer: assistant/effects.py) go with its waiting calls."""
    rounds, pending = [], []
    for stored in message.rounds:
        calls, results = [], []
        for call in stored.calls:
            calls.append(
                {
                    "id": call.call_id,
                    "name": call.name,
                    "arguments": strict_json.loads_or_text(call.arguments),
                }
            )
            if call.status == CallStatus.PENDING_CONFIRMATION:
                pending.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "arguments": strict_json.loads_or_text(call.arguments),
                        "description": call.description or "",
                        "effect": (effects or {}).get(call.call_id),
                    }
                )
            else:
                results.append(
                    {
                        "tool_call_id": call.call_id,
                        "name": call.name,
                        "status": call.status,
                        "content": call.content or "",
                    }
                )
        rounds.append(
            {"assistant_response": stored.assistant_response, "tool_calls": calls, "results": results}
        )
    signoffs = approvals.outcomes(object_session(message), message)
    return {
        "conversation_id": message.conversation_id,
        "message_id": message.id,
        "status": message.status,
        "reply": message.content,
        "rounds": rounds,
        "pending": pending,
        "usage": {"input_tokens": message.input_tokens, "output_tokens": message.output_tokens},
        "model": message.model,
        "signoff": approvals.latest_outcome(signoffs),
        "signoffs": signoffs,
    }
