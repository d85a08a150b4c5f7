"""Periods as people say them (issue 36): ranges written with ISO dates or the day before the
month, an open period "since 1 November" or "from Nov 10 onwards", the month before last, a part of
a month (上旬/中旬/下旬), a half year, a fortnight, the year so far, a month's name with no word before
it. Today is Friday 2026-11-27; weeks start on Monday."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from inventory_ai.assistant.providers.offline import slots
from inventory_ai.services import clock
from tests.support.evaluation import evaluate

TODAY = date(2026, 11, 27)


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("butter out 1 Nov to 15 Nov", date(2026, 11, 1), date(2026, 11, 15)),
        ("inbound from 3 October to 10 October", date(2026, 10, 3), date(2026, 10, 10)),
        ("inbound since 1 November", date(2026, 11, 1), TODAY),
        ("outbound from Nov 10 onwards", date(2026, 11, 10), TODAY),
        ("cream movements from 5 Nov onwards", date(2026, 11, 5), TODAY),
        ("2026-11-01~2026-11-15 的入库", date(2026, 11, 1), date(2026, 11, 15)),
        ("movements 2026-11-01 to 2026-11-15", date(2026, 11, 1), date(2026, 11, 15)),
        ("2026-10-20至2026-11-02黄油出库", date(2026, 10, 20), date(2026, 11, 2)),
        ("上上个月的出库", date(2026, 9, 1), date(2026, 9, 30)),
        ("上上月的入库", date(2026, 9, 1), date(2026, 9, 30)),
        ("11月上旬的入库", date(2026, 11, 1), date(2026, 11, 10)),
        ("10月下旬的出库", date(2026, 10, 21), date(2026, 10, 31)),
        ("九月中旬黄油出库", date(2026, 9, 11), date(2026, 9, 20)),
        ("本月中旬的入库", date(2026, 11, 11), date(2026, 11, 20)),
        ("这个月上旬的出库", date(2026, 11, 1), date(2026, 11, 10)),
        ("下旬的出库", date(2026, 11, 21), TODAY),  # this month's, so far
        ("上个月下旬的入库", date(2026, 10, 21), date(2026, 10, 31)),
        ("上半年黄油出库", date(2026, 1, 1), date(2026, 6, 30)),
        ("下半年的入库", date(2026, 7, 1), TODAY),
        ("H1 butter outbound", date(2026, 1, 1), date(2026, 6, 30)),
        ("H2 inbound", date(2026, 7, 1), TODAY),
        ("butter used in the past fortnight", date(2026, 11, 14), TODAY),
        ("inbound over the last fortnight", date(2026, 11, 14), TODAY),
        ("今年以来的入库", date(2026, 1, 1), TODAY),
        ("今年的出库", date(2026, 1, 1), TODAY),
        ("butter outbound this year", date(2026, 1, 1), TODAY),
        ("YTD butter outbound", date(2026, 1, 1), TODAY),
        ("year to date inbound", date(2026, 1, 1), TODAY),
        ("September outbound", date(2026, 9, 1), date(2026, 9, 30)),
        ("Oct movements", date(2026, 10, 1), date(2026, 10, 31)),
        ("November inbound so far", date(2026, 11, 1), TODAY),
        ("last quarter inbound", date(2026, 7, 1), date(2026, 9, 30)),
        ("上季度的入库", date(2026, 7, 1), date(2026, 9, 30)),
        ("本季度的出库", date(2026, 10, 1), TODAY),
        ("movements the week before last", date(2026, 11, 9), date(2026, 11, 15)),
        ("movements between the 16th and the 20th of this month", date(2026, 11, 16), date(2026, 11, 20)),
        ("Nov 20 之后的 inbound", date(2026, 11, 20), TODAY),
        ("butter out Nov 10 onwards", date(2026, 11, 10), TODAY),
        ("这周一到周三主仓的入库", date(2026, 11, 23), date(2026, 11, 25)),
        ("上周五的所有流水", date(2026, 11, 20), date(2026, 11, 20)),
        ("上周一到周三的出库", date(2026, 11, 16), date(2026, 11, 18)),
        ("本周二的入库", date(2026, 11, 24), date(2026, 11, 24)),
        ("去年上半年的入库", date(2025, 1, 1), date(2025, 6, 30)),
        ("first half of last year", date(2025, 1, 1), date(2025, 6, 30)),
        ("last year's Q4 inbound", date(2025, 10, 1), date(2025, 12, 31)),
        ("Q2 2025 outbound", date(2025, 4, 1), date(2025, 6, 30)),
        ("outbound from 1 to 15 Nov", date(2026, 11, 1), date(2026, 11, 15)),
        ("inbound between 3 and 10 Nov", date(2026, 11, 3), date(2026, 11, 10)),
        ("十一月一号到十五号的出库", date(2026, 11, 1), date(2026, 11, 15)),
        ("本月上半月的出库", date(2026, 11, 1), date(2026, 11, 15)),
        ("上个月下半月的入库", date(2026, 10, 16), date(2026, 10, 31)),
        ("自上周五以来的出库", date(2026, 11, 20), TODAY),
        ("outbound this time last month", date(2026, 10, 27), date(2026, 10, 27)),
        ("上个月的今天入了什么", date(2026, 10, 27), date(2026, 10, 27)),
    ],
)
def test_periods_people_say(text, since, until):
    period = slots.parse(text, TODAY).period
    assert period is not None, text
    assert (period.since, period.until) == (since, until)


@pytest.mark.parametrize(
    "text",
    [
        "may I see the butter stock",  # may: a verb, not the month
        "march the pallets to WH02",
        "出库黄油 2026-11-01",  # one date alone: no range
        "上半部分货架的黄油",  # 上半 of a shelf, not of a year
        "下周一要到的黄油",  # a day ahead: a due date, no period
    ],
)
def test_words_that_are_no_period(text):
    assert slots.parse(text, TODAY).period is None


def test_a_part_of_the_month_not_come_yet_is_no_period():
    assert slots.parse("下旬的出库", date(2026, 11, 5)).period is None  # never the 21st to the 5th


def test_whole_requests_with_such_periods_are_judged_right(app, session):
    """Through the real loop and the evaluation judge, on the clock the loop itself reads."""
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    today = clock.today()
    first = today.replace(day=1)
    before_last = (first - timedelta(days=1)).replace(day=1) - timedelta(days=1)
    movements = {"tool": "get_stock_movements", "role": "warehouse_manager"}
    cases = [
        {
            "id": "P1",
            "text": "上上个月无盐黄油出了多少",
            "args": {
                "material": "M027",
                "movement_type": "outbound",
                "since": before_last.replace(day=1).isoformat(),
                "until": before_last.isoformat(),
            },
        },
        {
            "id": "P2",
            "text": "YTD cocoa powder outbound",
            "args": {"material": "M082", "movement_type": "outbound", "since": f"{today.year}-01-01"},
        },
        {
            "id": "P3",
            "text": "cocoa powder outbound in the past fortnight",
            "args": {
                "material": "M082",
                "movement_type": "outbound",
                "since": (today - timedelta(days=13)).isoformat(),
            },
        },
    ]
    for result in evaluate(session, [{**movements, **case} for case in cases], today):
        assert result.ok, result.why


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("raise a PR for 40 kg honey, needed by the 5th", date(2026, 12, 5)),
        ("采购杏仁粉20公斤 需要在12/8前到", date(2026, 12, 8)),
        ("order 25 kg almond flour, due 20/12", date(2026, 12, 20)),
        ("年底前采购200公斤高筋面粉", date(2026, 12, 31)),
        ("明年底前要到", date(2027, 12, 31)),
        ("we need 80 kg caster sugar by end of December", date(2026, 12, 31)),
        ("order 10 kg honey by the end of next month", date(2026, 12, 31)),
        ("申请采购蜂蜜30公斤，两周内到", date(2026, 12, 11)),
        ("order 5 kg yeast within 10 days", date(2026, 12, 7)),
    ],
)
def test_due_dates_people_say(text, due):
    parsed = slots.parse(text, TODAY)
    assert parsed.due == due and parsed.period is None, text
