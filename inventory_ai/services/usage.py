"""Model tokens by user and day, from the stored usage rows (model_calls): the daily budget and the
admins' cost estimate read the same numbers."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.models import ModelCall, utcnow
from inventory_ai.services import clock


def tokens_today(session: Session, user_id: int) -> int:
    """Input and output tokens this user used since the plant's midnight (offline answers cost none)."""
    since = clock.day_start_utc(clock.today())
    return int(
        session.scalar(
            select(func.coalesce(func.sum(ModelCall.input_tokens + ModelCall.output_tokens), 0)).where(
                ModelCall.user_id == user_id, ModelCall.created_at >= since
            )
        )
    )


def seconds_to_midnight() -> int:
    """Until the plant's next day begins, when the budget is full again."""
    return max(1, int((clock.day_end_utc(clock.today()) - utcnow()).total_seconds()))


def cost_cny(model: str, input_tokens: int, output_tokens: int, prices: dict) -> float | None:
    """Estimated CNY for these tokens at `prices` (CNY per 1,000 input / output tokens by model), to
    a millionth of a yuan; None for a model without a price; the offline assistant costs nothing."""
    rates = prices.get(model)
    if rates is None:
        return None if model != "offline" else 0.0
    return round(input_tokens / 1000 * rates[0] + output_tokens / 1000 * rates[1], 6)
