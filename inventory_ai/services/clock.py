"""The plant's calendar: "today" and "yesterday" are the factory's days, not UTC's.

Timestamps are stored in UTC; a date people say (today, 上周, 2026-12-05) is a day in the plant's
time zone (INVENTORY_AI_TIMEZONE, Asia/Shanghai by default), turned into UTC bounds here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

PLANT = ZoneInfo("Asia/Shanghai")


def set_timezone(name: str) -> None:
    global PLANT
    PLANT = ZoneInfo(name)


def today() -> date:
    return datetime.now(PLANT).date()


def day_start_utc(day: date) -> datetime:
    """The UTC instant (naive, as stored) at which this plant day begins."""
    return datetime.combine(day, time.min, PLANT).astimezone(UTC).replace(tzinfo=None)


def day_end_utc(day: date) -> datetime:
    return day_start_utc(day + timedelta(days=1))
