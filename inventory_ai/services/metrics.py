"""Operational figures for admins: tool calls and durations, rounds per answer, tokens and their
estimated cost per user per day."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.config import MODEL_PRICES
from inventory_ai.models import ChatMessage, ModelCall, ToolCallRecord, ToolRound, User, utcnow
from inventory_ai.services import clock
from inventory_ai.services.usage import cost_cny


def _percentile(values: list[int], p: float) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def metrics(session: Session, days: int = 30, prices: dict | None = None) -> dict:
    """`prices`: CNY per 1,000 input and output tokens by model (Config.model_prices)."""
    since = utcnow() - timedelta(days=days)
    calls = session.execute(
        select(ToolCallRecord.name, ToolCallRecord.status, ToolCallRecord.duration_ms)
        .join(ToolRound, ToolRound.id == ToolCallRecord.round_id)
        .where(ToolRound.started_at >= since, ToolCallRecord.status.in_(["success", "error"]))
    ).all()
    by_tool: dict[str, list] = defaultdict(list)
    for name, status, duration in calls:
        by_tool[name].append((status, duration))
    tools = [
        {
            "tool": name,
            "calls": len(rows),
            "success_rate": round(sum(1 for s, _ in rows if s == "success") / len(rows), 3),
            "p50_ms": _percentile([d for _, d in rows], 50),
            "p95_ms": _percentile([d for _, d in rows], 95),
        }
        for name, rows in sorted(by_tool.items())
    ]
    rounds = dict(
        session.execute(
            select(ChatMessage.id, func.count(ToolRound.id))
            .outerjoin(ToolRound, ToolRound.message_id == ChatMessage.id)
            .where(ChatMessage.role == "assistant", ChatMessage.created_at >= since)
            .group_by(ChatMessage.id)
        ).all()
    )
    distribution = Counter(rounds.values())
    tokens = tokens_per_user_per_day(session, days, prices)
    return {
        "days": days,
        "tools": tools,
        "rounds_per_answer": {str(k): v for k, v in sorted(distribution.items())},
        "tokens_per_user_per_day": tokens,
    }


def tokens_per_user_per_day(session: Session, days: int, prices: dict | None = None) -> list[dict]:
    """Tokens and their estimated cost (CNY) per user and plant day (the days the daily token budget
    counts, INVENTORY_AI_TIMEZONE), today and the `days - 1` before it, with each model apart.
    A row's cost is null when one of its models has no price (INVENTORY_AI_MODEL_PRICES)."""
    prices = MODEL_PRICES if prices is None else prices
    first = clock.today() - timedelta(days=days - 1)
    # Summed per UTC hour in the database (the hour as text: to_char on PostgreSQL, strftime on
    # SQLite), then each hour is put in its plant day here: exact in every zone whose offset from UTC
    # is whole hours, and a handful of rows per user and day whatever the number of calls.
    if session.get_bind().dialect.name == "postgresql":
        hour = func.to_char(ModelCall.created_at, "YYYY-MM-DD HH24")
    else:
        hour = func.strftime("%Y-%m-%d %H", ModelCall.created_at)
    hourly = (
        select(
            ModelCall.user_id.label("user_id"),
            ModelCall.model.label("model"),
            hour.label("hour"),
            ModelCall.input_tokens.label("input_tokens"),
            ModelCall.output_tokens.label("output_tokens"),
        )
        .where(ModelCall.created_at >= clock.day_start_utc(first))
        .subquery()
    )
    summed: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for username, model, at, i, o in session.execute(
        select(
            User.username,
            hourly.c.model,
            hourly.c.hour,
            func.sum(hourly.c.input_tokens),
            func.sum(hourly.c.output_tokens),
        )
        .join(User, User.id == hourly.c.user_id)
        .group_by(User.username, hourly.c.model, hourly.c.hour)
    ).all():
        day = datetime.strptime(at, "%Y-%m-%d %H").replace(tzinfo=UTC).astimezone(clock.PLANT).date()
        used = summed[(day.isoformat(), username)][model]
        used[0] += int(i or 0)
        used[1] += int(o or 0)
    rows = []
    for (day, username), by_model in sorted(summed.items()):
        models = [
            {"model": model, "input_tokens": i, "output_tokens": o, "cost_cny": cost_cny(model, i, o, prices)}
            for model, (i, o) in sorted(by_model.items())
        ]
        costs = [m["cost_cny"] for m in models]
        rows.append(
            {
                "user": username,
                "day": day,
                "input_tokens": sum(m["input_tokens"] for m in models),
                "output_tokens": sum(m["output_tokens"] for m in models),
                "cost_cny": None if None in costs else round(sum(costs), 6),
                "models": models,
            }
        )
    return rows
