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
