"""What a call does, in the reader's language: a booking proposed in Chinese reads in English to a
manager whose page is English. Written again from the call's arguments (as approved, when edited)
by its tool (`describe_for`); the sentence stored when it was proposed is kept for when that cannot
be done (a tool gone, a material renamed past recognition) and for the model's history."""

from __future__ import annotations

import json

from sqlalchemy.orm import Session

from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.tools.base import ToolError
from inventory_ai.errors import DomainError
from inventory_ai.models import ToolCallRecord


def described(registry: ToolRegistry, session: Session, record: ToolCallRecord, language: str) -> str:
    tool = registry.get(record.name)
    if tool is not None:
        try:
            arguments = json.loads(record.approved_arguments or record.arguments)
            if isinstance(arguments, dict):
                text = tool.describe_for(arguments, session, language)
                if text:
                    return text
        except (ToolError, DomainError, ValueError, KeyError, TypeError, RecursionError):
            pass  # the stored sentence below
    return record.description or record.name
