"""Intents: the offline provider's routing rules, edited by admins (tool or API)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.database import begin_write
from inventory_ai.errors import Conflict, InvalidInput
from inventory_ai.models import Intent

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")

# An intent's phrases are the classifier's training examples: the seed gives each tool dozens.
MAX_KEYWORDS = 300
MAX_KEYWORD_LENGTH = 50


def active_intents(session: Session) -> list[Intent]:
    return list(session.scalars(select(Intent).where(Intent.active.is_(True)).order_by(Intent.id)))


def clean_keywords(keywords: Iterable[str]) -> list[str]:
    """An intent's phrases as stored: trimmed, lower-cased, once each; too many or too long is refused."""
    cleaned = sorted({k.strip().lower() for k in keywords if k and k.strip()})
    if not cleaned:
        raise InvalidInput("give at least one keyword")
    if len(cleaned) > MAX_KEYWORDS:
        raise InvalidInput(f"an intent has at most {MAX_KEYWORDS} keywords")
    if any(len(k) > MAX_KEYWORD_LENGTH for k in cleaned):
        raise InvalidInput(f"keywords are at most {MAX_KEYWORD_LENGTH} characters")
    return cleaned


def create_intent(
    session: Session,
    name: str,
    keywords: Iterable[str],
    tool_name: str,
    known_tools: Iterable[str],
    default_arguments: dict[str, Any] | None = None,
    priority: int = 60,
    user_id: int | None = None,
) -> Intent:
    if not _NAME.match(name or ""):
        raise InvalidInput("intent name must be 2-64 lower-case letters, digits or _, starting with a letter")
    if tool_name not in set(known_tools):
        raise InvalidInput(f"unknown tool {tool_name!r}; tools are: {', '.join(sorted(known_tools))}")
    cleaned = clean_keywords(keywords)
    begin_write(session)
    if session.scalar(select(Intent.id).where(Intent.name == name)) is not None:
        raise Conflict(f"an intent named {name!r} already exists")
    intent = Intent(
        name=name,
        keywords=cleaned,
        tool_name=tool_name,
        default_arguments=default_arguments or {},
        priority=priority,
        created_by_id=user_id,
    )
    session.add(intent)
    session.commit()
    return intent
