"""Operational figures for admins: tool calls and durations, rounds per answer, tokens per user per day."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.models import ChatMessage, ModelCall, ToolCallRecord, ToolRound, User, utcnow


def _percentile(values: list[int], p: float) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def metrics(session: Session, days: int = 30) -> dict:
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
    day = func.date(ModelCall.created_at)
    tokens = [
        {"user": username, "day": str(d), "input_tokens": int(i or 0), "output_tokens": int(o or 0)}
        for username, d, i, o in session.execute(
            select(User.username, day, func.sum(ModelCall.input_tokens), func.sum(ModelCall.output_tokens))
            .join(User, User.id == ModelCall.user_id)
            .where(ModelCall.created_at >= since)
            .group_by(User.username, day)
            .order_by(day, User.username)
        ).all()
    ]
    return {
        "days": days,
        "tools": tools,
        "rounds_per_answer": {str(k): v for k, v in sorted(distribution.items())},
        "tokens_per_user_per_day": tokens,
    }
