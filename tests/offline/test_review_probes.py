"""What a hostile review of a change to the told/supposed and correction readings found wrong, kept
as cases for the next attempt (the change itself was taken back). A question after a booking is never
a correction of it (不对，细砂糖放在哪 after 出库无盐黄油5公斤), above all never a purchase request, which
is submitted without confirmation; 不好意思 mid-message is no correction unless 是, an amount or a
direction follows; an explicit order (帮我出库, please book it out) is booked even when what is left is
asked too; a price said to have changed (价格改了, 价格改天) is no order to tamper; 调过仓 said of the
past beside 出库 is no transfer; "make it" before a day or a count of deliveries corrects nothing. The
cases are review_probes.jsonl beside this file, each with the earlier turn it follows."""

from __future__ import annotations

import pytest

from tests.support.probes import WRITES, cases, judged

# Still missed (work left): 单价调到6块了 beside 下单 is read as a booking the purchaser may not make.
MISSED = {"RV44"}


@pytest.mark.parametrize("case", cases(__file__, "review_probes.jsonl", MISSED))
def test_a_question_or_a_polite_word_never_becomes_a_write(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
    if case["tool"] not in WRITES:  # a question is never a write
        assert not {c["name"] for c in result.calls} & WRITES, result.calls
