"""The four-eyes rule for an answer's bookings: what each approved booking is worth, and asking a
second person to sign off one that is worth more than the threshold (services/approvals.py says who
needs it and who may give it)."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

from sqlalchemy.orm import Session

from inventory_ai.assistant.registry import Toolbox
from inventory_ai.assistant.tools.base import ToolContext, ToolError
from inventory_ai.errors import DomainError
from inventory_ai.models import CallStatus, ChatMessage, ToolCallRecord, User
from inventory_ai.services import approvals, audit


class SignoffRule:
    def __init__(self, signoff_value: Decimal = Decimal(5000), signoff_hours: float = 24):
        self.signoff_value = signoff_value
        self.signoff_hours = signoff_hours

    def needs_signoff(self, user: User, value: Decimal | None) -> bool:
        return value is not None and approvals.needs_signoff(user.role, value, self.signoff_value)

    def values(
        self, toolbox: Toolbox, context: ToolContext, message: ChatMessage, arguments: dict[str, dict]
    ) -> dict[str, Decimal]:
        """What each approved booking is worth for the rule: the answer's bookings count together
        (two of 500 kg are one of 1000), those approved earlier in it included."""
        own = {call_id: self._value(toolbox, context, record, arguments[call_id])
               for record in message.rounds[-1].calls if (call_id := record.call_id) in arguments}  # fmt: skip
        earlier = sum(
            (self._value(toolbox, context, c, json.loads(c.approved_arguments or c.arguments)) or Decimal(0))
            for r in message.rounds for c in r.calls
            if c.status in (CallStatus.SUCCESS, CallStatus.AWAITING_SIGNOFF) and c.call_id not in arguments
        )  # fmt: skip
        together = earlier + sum(v for v in own.values() if v is not None)
        return {call_id: together for call_id, value in own.items() if value is not None}

    @staticmethod
    def _value(
        toolbox: Toolbox, context: ToolContext, record: ToolCallRecord, arguments: dict
    ) -> Decimal | None:
        tool = toolbox.get(record.name)
        if tool is None:
            return None
        try:
            return tool.value_cny(arguments, replace(context, tool_call_id=record.call_id))
        except (ToolError, DomainError):  # refused when carried out (a role or warehouses changed)
            return None

    def ask(
        self, session: Session, user: User, message: ChatMessage, record: ToolCallRecord, value: Decimal
    ) -> None:
        """A large booking by someone who may not sign it off themselves waits for a second person."""
        record.status = CallStatus.AWAITING_SIGNOFF.value
        approvals.request(session, record, message.id, user, value, self.signoff_hours)
        audit.record(
            session, "signoff_requested", "waiting", user_id=user.id, role=user.role, tool_name=record.name,
            arguments={"tool_call_id": record.call_id, "value_cny": str(value)},
            conversation_id=message.conversation_id, message_id=message.id,
        )  # fmt: skip
