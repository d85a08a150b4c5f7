"""Reads of issue 36's hard tail said several ways, written before their misses were read: periods
(a month, an open period with 以后/以来/since, ranges with 到, a slash or a dot, relative weeks), a
purchase's due date (by Dec 1, 明年七月底前, 下月初, 十二月五号前: the date only, the amount as main
reads it), follow-ups in one conversation (那X呢？ asks the last question again for X; 上个月呢 for
another period) and what is in a place or a category (包材仓都有什么, "show me all the flavourings").
The cases are in reads_probes.jsonl beside this file, judged by meaning on the plant's day
2026-11-27, a Friday. The ones still missed are marked strict: a fix that makes one pass unmarks it."""

from __future__ import annotations

import pytest

from tests.support.probes import answered_as_asked, cases

# Still missed (work left): none. First run: 56/65; of the 57 written before any was run, 55 (上周三到上周五
# read as Wednesday only, 下下周三 as next Wednesday); the 8 after them were said after reading periods.py,
# the last 3 after reading dev_gk's misses (拉一下 read as a material, 放了些啥 as what is low).
MISSED: set[str] = set()


@pytest.mark.parametrize("case", cases(__file__, "reads_probes.jsonl", MISSED))
def test_periods_due_dates_follow_ups_and_places_as_people_say_them(app, session, monkeypatch, case):
    answered_as_asked(app, session, monkeypatch, case)
