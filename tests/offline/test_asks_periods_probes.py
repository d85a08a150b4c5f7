"""Four of issue 36's classes, written as a spec before any miss was read: two asks in one message
(a read and a booking joined by a comma, a space, 再, "and"; two reads), transfers and history asked
about (调去, 转出, "moved to", a store's transfers, a material's history), periods (去年上半年, quarters
and half years said every way, "1 to 15 Nov", 十一月一号到十五号, 上半月, 自上周五以来, "this time last
month") and a purchase's due date ("by the 5th", 12/8前, 年底前, "by end of December", 两周内, "due
20/12"). The cases are in asks_periods_probes.jsonl beside this file, judged by meaning like the
evaluation sets (tests/support/evaluation.py) on the plant's day 2026-11-27, a Friday. The ones still
missed are marked: each is work left, and a fix that makes one pass must unmark it (strict)."""

from __future__ import annotations

import pytest

from tests.support.probes import STAFF, WRITES, answered_as_asked, cases, judged

# Still missed (work left): 挪到…的货 read as a booking, 哪些东西从冷库调出去了 as what the store holds, 发到
# linked to a material, 入库和出库各是多少 as one direction, 淡奶油入了12升，现在一共多少 read as the
# store's totals (no booking: a told past event). First run: 48/72 and, of the 22 added before
# reading their misses, 12/22.
MISSED = {"AP011", "AP074", "AP077", "AP081", "AP094"}


@pytest.mark.parametrize("case", cases(__file__, "asks_periods_probes.jsonl", MISSED))
def test_two_asks_transfers_periods_and_due_dates_as_people_say_them(app, session, monkeypatch, case):
    answered_as_asked(app, session, monkeypatch, case)


# A what-if (假如/要是/如果/…的话/…之后 with an amount) or a told past event (淡奶油入了10箱) beside a
# question is never an ask of its own that books: nothing is proposed; the material is read, or asked.
SUPPOSED_OR_TOLD = [
    ("淡奶油入了10箱 还有多少", "M030"),
    ("假如入库10箱淡奶油 还有多少", "M030"),
    ("要是领2袋高筋面粉 还剩多少？", "M001"),
    ("出3袋高筋面粉的话 还剩多少", "M001"),
    ("我要是出库3袋黑芝麻 还剩多少？", "M112"),
    ("出库高筋面粉3袋之后 还剩多少", "M001"),
    ("无盐黄油上周出了5公斤，还剩多少", "M027"),
    ("淡奶油入了12升，现在一共多少", "M030"),
]


@pytest.mark.parametrize(("text", "material"), SUPPOSED_OR_TOLD, ids=[t for t, _m in SUPPOSED_OR_TOLD])
def test_a_what_if_or_a_told_past_event_beside_a_question_books_nothing(
    app, session, monkeypatch, text, material
):
    case = {"id": text, "role": STAFF, "text": text, "tool": "get_material_detail", "args": {}}
    calls = judged(app, session, monkeypatch, case).calls
    assert not [c for c in calls if c["name"] in WRITES], calls
    assert all(c["arguments"].get("material") in (material, None) for c in calls), calls


def test_a_booking_asked_whether_it_needs_approval_reads_the_material_not_what_is_low(
    app, session, monkeypatch
):
    text = "出库高筋面粉20袋，需要主管批准吗？需要的话就提交给主管"
    case = {"id": "approval", "role": STAFF, "text": text, "tool": "get_material_detail", "args": {}}
    calls = judged(app, session, monkeypatch, case).calls
    assert "list_low_stock" not in [c["name"] for c in calls], calls
