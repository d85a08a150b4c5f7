"""A domain tool's context as the loop gives it, for one user: what the tools' tests and the benches
(bench/tokens.py, bench/history.py) run a tool with, outside a chat."""

from __future__ import annotations

from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.services import sites


def context(session, username="admin", **kw) -> ToolContext:
    user = session.scalar(select(User).where(User.username == username))
    return ToolContext(
        user_id=user.id,
        username=user.username,
        role=user.role,
        session=session,
        engine=db.engine,
        request_id=None,
        conversation_id="c",
        message_id="m",
        sites=sites.of_user(session, user),
        tool_call_id="call_x",
        tool_names=manager().registry.names(),
        **kw,
    )
