"""Four of issue 36's hard-tail classes, written as a spec before any miss of an evaluation set was
read: a single ask that tells a past booking or supposes one beside a question (高筋面粉出了3袋 还剩多少,
"if I book out 3 bags … how much is left?": the material is read, nothing is proposed), a booking
corrected as it is said (改成, 改为, 不对…应该是, "sorry, make it"; 把库存改成0 stays refused), transfers
asked about (调拨记录, "did anything move from X to Y", 移库单) and periods said every way (本月至今,
"month to date", 上周一到周三, 这两天, "the second half of October"). The cases are in
tail_probes.jsonl beside this file, judged by meaning like the evaluation sets
(tests/support/evaluation.py) on the plant's day 2026-11-27, a Friday. The ones still missed are
marked: each is work left, and a fix that makes one pass must unmark it (strict)."""

from __future__ import annotations

import pytest

from tests.support.probes import WRITES, cases, judged

# Still missed (work left): a what-if read as the history of what it supposes (假设明天入库…库存会是多少: a
# read, never a write), half of a month said in English ("the second half of October"). First run,
# before any fix: 36/49 (told or supposed 8/11, corrections 6/12, transfers 12/12, periods 11/14 (sic:
# 这两天, "yesterday and today" and the English half month missed).
MISSED = {"TP07", "PE13"}


@pytest.mark.parametrize("case", cases(__file__, "tail_probes.jsonl", MISSED))
def test_told_or_supposed_bookings_corrections_transfers_and_periods(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
    if case["tool"] not in WRITES:  # a question or a refusal is never a write
        assert not {c["name"] for c in result.calls} & WRITES


# Said another way than the dev_gk odd misses they were learnt from (never those sentences): a
# correction that is the whole message, 哦是 after the first amount, goods told as taken beside what is
# left, 转过仓, 拉一下 as a request word, 下下周五.
LEARNT = [
    ("出库细砂糖2袋", "不好意思，是3袋", {"tool": "record_stock_movement", "args": {"material": "M014", "movement_type": "outbound", "quantity": 150}}),
    (None, "出库 蜂蜜一桶……哦是两桶", {"tool": "record_stock_movement", "args": {"material": "M022", "movement_type": "outbound", "quantity": 50}}),
    (None, "他们刚拿走三箱淡奶油，冷库里还剩几箱", {"tool": "get_material_detail", "args": {"material": "M030"}}),
    (None, "无盐黄油最近转过仓吗", {"tool": "get_stock_movements", "args": {"material": "M027", "movement_type": "transfer"}}),
    (None, "把上个月的出库记录拉一下", {"tool": "get_stock_movements", "args": {"movement_type": "outbound", "period": "last_month"}}),
    (None, "申请采购细砂糖10袋，下下周五到", {"tool": "create_purchase_request", "args": {"material": "M014", "needed_by": "2026-12-11"}}),
]  # fmt: skip


@pytest.mark.parametrize(("context", "text", "expected"), LEARNT, ids=[t for _c, t, _e in LEARNT])
def test_what_the_odd_misses_taught_said_another_way(app, session, monkeypatch, context, text, expected):
    role = "purchaser" if expected["tool"] == "create_purchase_request" else "warehouse_manager"
    case = {"id": text, "role": role, "text": text, **expected, **({"context": [context]} if context else {})}
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{text!r}: {result.why}"
