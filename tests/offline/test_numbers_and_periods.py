"""Numbers with magnitudes (cn2an for the Chinese numerals) and periods people say: a month, an
open period, the last months, the week before last, a purchase's due date; through the real loop."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from inventory_ai.assistant.providers.offline import slots
from inventory_ai.services import clock
from tests.support.clients import ask, first_call

TODAY = date(2026, 11, 27)


@pytest.mark.parametrize(
    ("text", "amount", "unit"),
    [
        ("给包装线出面包袋2万个", 20000, "pcs"),
        ("入库标签纸1.2k张", 1200, "pcs"),
        ("出库三千五个纸杯", 3500, "pcs"),
        ("一万二个封口贴", 12000, "pcs"),
        ("2.5万个", 25000, "pcs"),
        ("入库蛋糕盒3w个", 30000, "pcs"),  # w: chat's 万
        ("出库5kg黄油", 5, "kg"),  # k of kg is no thousand
        ("入库2千克糖", 2, "kg"),  # 千 of 千克 neither
    ],
)
def test_magnitudes_are_read(text, amount, unit):
    found = slots.parse(text, TODAY).quantities
    assert [(q.amount, q.unit) for q in found] == [(amount, unit)]


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("9月的入库", date(2026, 9, 1), date(2026, 9, 30)),
        ("八月份出了多少黄油", date(2026, 8, 1), date(2026, 8, 31)),
        ("how much butter went out in October", date(2026, 10, 1), date(2026, 10, 31)),
        ("12月的采购", date(2025, 12, 1), date(2025, 12, 31)),  # a month not come yet: last year's
        ("10号以后的出库", date(2026, 11, 10), TODAY),
        ("10月以来的入库", date(2026, 10, 1), TODAY),
        ("since October", date(2026, 10, 1), TODAY),
        ("抹茶过去三个月的出库量", date(2026, 8, 27), TODAY),
        ("上上周的调拨", date(2026, 11, 9), date(2026, 11, 15)),
        ("10/5-10/12 黄油的入库", date(2026, 10, 5), date(2026, 10, 12)),  # a range with a slash
        ("11.3到11.9的出库", date(2026, 11, 3), date(2026, 11, 9)),  # or a dot
        ("今年三季度奶油的出库", date(2026, 7, 1), date(2026, 9, 30)),  # a quarter
        ("Q1 butter movements", date(2026, 1, 1), date(2026, 3, 31)),
        ("上季度的入库", date(2026, 7, 1), date(2026, 9, 30)),
        ("movements this quarter", date(2026, 10, 1), TODAY),
        ("六月到八月黄油的出库", date(2026, 6, 1), date(2026, 8, 31)),  # months from one to another
        ("4月份到6月份的入库", date(2026, 4, 1), date(2026, 6, 30)),
        ("butter used from June to August", date(2026, 6, 1), date(2026, 8, 31)),
        ("between July and September", date(2026, 7, 1), date(2026, 9, 30)),
        ("上个月20号以后的入库", date(2026, 10, 20), TODAY),  # a day of last month on
        ("2/11到15/11 冷库的出库", date(2026, 11, 2), date(2026, 11, 15)),  # the day first: no 15th month
        ("从11月5号到昨天黄油的入库", date(2026, 11, 5), date(2026, 11, 26)),  # to yesterday, not today
        ("双十二那天的入库", date(2025, 12, 12), date(2025, 12, 12)),  # a day known by its name
        ("what went out on christmas eve", date(2025, 12, 24), date(2025, 12, 24)),
    ],
)
def test_months_and_open_periods(text, since, until):
    period = slots.parse(text, TODAY).period
    assert (period.since, period.until) == (since, until)


@pytest.mark.parametrize(
    "text",
    ["月饼盒还有多少", "出库5公斤月饼盒", "may I see the butter", "出库3.5-4公斤黄油", "季度报表的格式"],
)
def test_a_month_word_that_is_no_month(text):
    assert slots.parse(text, TODAY).period is None


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("采购黄油20箱 by Dec 1", date(2026, 12, 1)),
        ("order 20 cases for 5 December", date(2026, 12, 5)),
        ("采购黄油20箱，明年七月底前到", date(2027, 7, 31)),
        ("采购黄油20箱 月底前", date(2026, 11, 30)),
        ("order 10 cases of butter by 12/20", date(2026, 12, 20)),  # month/day with a slash
        ("申请淡奶油10箱，下个月20号之前要", date(2026, 12, 20)),  # a day of next month
        ("采购黄油5箱，30号前到", date(2026, 11, 30)),
        ("黄油后天就要，采购5箱", date(2026, 11, 29)),  # tomorrow and the day after, needed
        ("need 5 cases of butter by tomorrow", date(2026, 11, 28)),
    ],
)
def test_due_dates(text, due):
    assert slots.parse(text, TODAY).due == due


def test_a_month_asked_about_is_the_history_of_that_month(app):
    today = clock.today()
    month = (today.replace(day=1) - timedelta(days=1)).month  # last month, said by its number
    call = first_call(ask(app, "manager", f"{month}月的入库记录"))
    assert call["name"] == "get_stock_movements" and call["arguments"]["movement_type"] == "inbound"
    assert date.fromisoformat(call["arguments"]["since"]).month == month


def test_a_purchase_keeps_its_due_date(app):
    call = first_call(ask(app, "purchaser", "申请采购无盐黄油20箱，月底前到"))
    assert call["name"] == "create_purchase_request" and call["arguments"]["material"] == "M027"
    today = clock.today()
    end = (today.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    assert call["arguments"]["needed_by"] == end.isoformat()


def test_a_magnitude_is_booked_whole(app):
    call = first_call(ask(app, "staff", "给包装线出面包袋2万个"))
    assert call["name"] == "record_stock_movement"
    assert call["arguments"]["material"] == "M091" and call["arguments"]["quantity"] == 20000
