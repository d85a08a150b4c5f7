"""The ToolExecutor contract every tool implements, the context it runs in, and its typed errors."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from inventory_ai.errors import DomainError, Forbidden, InvalidInput
from inventory_ai.errors import NotFound as DomainNotFound
from inventory_ai.models import ROLES
from inventory_ai.services import sites
from inventory_ai.services.sites import OutsideSites, Sites

ALL_ROLES: frozenset[str] = frozenset(ROLES)


class ToolError(Exception):
    """A failure the model is told about as `{"error": {"type", "message"}}`."""

    type = "ExecutionFailed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidArguments(ToolError):
    type = "InvalidArguments"


class NotFound(ToolError):
    type = "NotFound"


class PermissionDenied(ToolError):
    type = "PermissionDenied"

    def __init__(self, message: str, warehouse: str | None = None, message_zh: str | None = None):
        super().__init__(message)
        # The warehouse asked for, when it is outside the user's (audited as `denied`), and the
        # refusal in Chinese ("您负责冷库；…请询问主仓库的同事").
        self.warehouse = warehouse
        self.message_zh = message_zh


class ExecutionFailed(ToolError):
    type = "ExecutionFailed"


class Timeout(ToolError):
    type = "Timeout"


def from_domain(exc: DomainError) -> ToolError:
    """Service errors keep their message; only the type is translated for the model."""
    if isinstance(exc, InvalidInput):
        return InvalidArguments(exc.message)
    if isinstance(exc, DomainNotFound):
        return NotFound(exc.message)
    if isinstance(exc, OutsideSites):
        return PermissionDenied(exc.message, exc.warehouse.code, exc.message_zh)
    if isinstance(exc, Forbidden):
        return PermissionDenied(exc.message)
    return ExecutionFailed(exc.message)


@dataclass
class ToolContext:
    user_id: int
    username: str
    role: str
    session: Session
    engine: Engine
    request_id: str | None
    conversation_id: str
    message_id: str
    # The warehouses the user works in, read for this request (services/sites.py): every stock
    # reader takes them, and a booking outside them is refused.
    sites: Sites
    language: str = "zh"
    # The product's id for the call being run (never the model's, which may repeat).
    tool_call_id: str = ""
    # Every registered tool name: what create_new_intent may point an intent at.
    tool_names: frozenset[str] = frozenset()

    @classmethod
    def of_answer(
        cls, session: Session, engine: Engine, user, message, mine: Sites | None = None, **more
    ) -> ToolContext:
        """The context a tool runs in while answering `message` (a ChatMessage) for `user`; with no
        message, for a call from outside a chat (MCP), in the user's language. `mine`: the user's
        warehouses if this request has read them already, else they are read now."""
        chat = message is not None
        return cls(
            user_id=user.id,
            username=user.username,
            role=user.role,
            session=session,
            engine=engine,
            request_id=None,
            conversation_id=message.conversation_id if chat else "",
            message_id=message.id if chat else "",
            sites=mine if mine is not None else sites.of_user(session, user),
            language=message.language if chat else user.language or "zh",
            **more,
        )

    def for_call(self, session: Session, tool_call_id: str) -> ToolContext:
        """This context for one call: its own session and the call's id, the rest shared (as
        dataclasses.replace makes it, without its per-field work: the loop makes one per call)."""
        made = copy.copy(self)
        made.session, made.tool_call_id = session, tool_call_id
        return made


class ToolExecutor(ABC):
    """A tool is a thin adapter: name, description, schema, permission rule, a call into a service."""

    name: ClassVar[str]
    description: ClassVar[str]  # for the model
    parameters: ClassVar[dict[str, Any]]
    # For people, (Chinese, English): the name on the page, and what it does with an example
    # (the offline assistant's help text).
    labels: ClassVar[tuple[str, str]]
    help: ClassVar[tuple[str, str]]
    read_only: ClassVar[bool] = True
    timeout_seconds: ClassVar[float] = 10.0
    # Nothing in it can outlast timeout_seconds: its queries are stopped by the database at the
    # deadline, the rest is Python bounded by its arguments (no network, no waiting). Such a read,
    # alone in its round, runs in the asking thread (CallRunner); any other runs in a thread of its
    # own, given up on at its timeout.
    bounded: ClassVar[bool] = False
    # Code defaults; admins may override both at run time (ToolSetting).
    enabled_by_default: ClassVar[bool] = True
    allowed_roles: ClassVar[frozenset[str]] = ALL_ROLES

    def is_enabled(self) -> bool:
        return self.enabled_by_default

    def requires_permission(self) -> bool:
        return self.allowed_roles != ALL_ROLES

    def has_permission(self, role: str) -> bool:
        return role in self.allowed_roles

    def requires_confirmation(self, arguments: dict) -> bool:
        return False

    def permission_note(self, role: str) -> str | None:
        """A limit inside the tool for this role (shown in docs/permissions.md), if any."""
        return None

    def describe_call(self, arguments: dict, context: ToolContext) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in arguments.items())
        return f"{self.name}({shown})"

    def describe_for(self, arguments: dict, session: Session, language: str) -> str | None:
        """What the call does, written again in a reader's language (zh or en) from its arguments,
        without the checks `describe_call` makes; None: the description stored when it was proposed
        is shown as it is."""
        return None

    def value_cny(self, arguments: dict, context: ToolContext) -> Decimal | None:
        """What the call moves, in CNY, for the sign-off rule (services/approvals.py); None: nothing."""
        return None

    def effect(self, arguments: dict, context: ToolContext, visible=None) -> dict | None:
        """What the call would do if carried out now, for the person deciding it (a booking: the
        levels before and after, assistant/effects.py); None: nothing to show. `visible` says which
        warehouses' figures the viewer may see (None: all)."""
        return None

    def recorded_outcome(self, arguments: dict, context: ToolContext) -> Any | None:
        """A write approved before its process died may or may not have taken effect. If it did,
        its result (found by context.tool_call_id), else None. Writes that can tell say so here."""
        return None

    @abstractmethod
    def execute(self, arguments: dict, context: ToolContext) -> Any:
        """Return a JSON-serialisable result or raise a ToolError (DomainErrors are translated)."""
