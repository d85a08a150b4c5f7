"""What a call waiting for a person would do if it were carried out now: a booking's levels before
and after in each warehouse it changes, its unit, its value in CNY and its flags
(services/booking_effect.py). Computed each time it is shown (the chat card and `pending`, the
sign-off page and /api/v1/approvals, MCP), so it is never older than the page; the booking's result
carries it again as the ledger had it when it booked.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from inventory_ai import strict_json
from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.tools.base import ToolContext, ToolError
from inventory_ai.errors import DomainError
from inventory_ai.models import CallStatus, ChatMessage, User, Warehouse
from inventory_ai.services import sites
from inventory_ai.services.sites import Sites


def visible_to(viewer: User, viewer_sites: Sites | None = None) -> Callable[[Warehouse], bool] | None:
    """Which warehouses' figures `viewer` may see in an effect; None: every warehouse. The viewer's
    warehouses (users.warehouses, read now unless given): a signer sees only the warehouses they
    work in."""
    found = (
        viewer_sites if viewer_sites is not None else sites.of_user(Session.object_session(viewer), viewer)
    )
    return None if found.everywhere else found.visible


def of_call(
    registry: ToolRegistry,
    session: Session,
    engine: Engine,
    viewer: User,
    name: str,
    call_id: str,
    arguments,
) -> dict | None:
    """The effect of one waiting call as `viewer` may see it, or None (not a booking, or one whose
    material or warehouse is gone from the catalogue: its description says what it was)."""
    tool = registry.get(name)
    if tool is None or not isinstance(arguments, dict):
        return None
    viewer_sites = sites.of_user(session, viewer)
    context = ToolContext(
        user_id=viewer.id, username=viewer.username, role=viewer.role, session=session, engine=engine,
        request_id=None, conversation_id="", message_id="", sites=viewer_sites,
        language=viewer.language or "zh",
        tool_call_id=call_id,
    )  # fmt: skip
    try:
        return tool.effect(arguments, context, visible_to(viewer, viewer_sites))
    except (ToolError, DomainError):
        return None


def of_answer(
    registry: ToolRegistry, session: Session, engine: Engine, viewer: User, message: ChatMessage
) -> dict[str, dict]:
    """call_id -> effect for each call of the answer that waits for its user's confirmation."""
    if message.status != "awaiting_confirmation":
        return {}
    found = {}
    for call in (c for r in message.rounds for c in r.calls if c.status == CallStatus.PENDING_CONFIRMATION):
        arguments = strict_json.loads_or_text(call.approved_arguments or call.arguments)
        effect = of_call(registry, session, engine, viewer, call.name, call.call_id, arguments)
        if effect is not None:
            found[call.call_id] = effect
    return found
