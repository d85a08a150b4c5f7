"""What a hostile review of the told/supposed and correction work found wrong, kept as cases: a
question after a booking is never a correction of it (不对，细砂糖放在哪 after 出库无盐黄油5公斤; above
all never a purchase request, which is submitted without confirmation), while a message that is only a
replacement (不好意思，是12箱) still corrects the turn before; 不好意思 mid-message is no correction unless
是, an amount or a direction follows; an explicit order (帮我出库, please book it out) is booked even when
what is left is asked too; a price said to have changed (价格改了, 价格改天) is no order to tamper; 调过仓
said of the past beside 出库 is no transfer; "make it" before a day or a count of deliveries corrects
nothing. The cases are review_probes.jsonl beside this file, each with the earlier turn it follows."""

from __future__ import annotations

import pytest

from tests.support.probes import WRITES, cases, judged

# Still missed (work left): 单价调到6块了 said as news beside 下单 is no tamper any more, but the order is
# read as a booking the purchaser may not make (as on main).
MISSED = {"RV44"}


@pytest.mark.parametrize("case", cases(__file__, "review_probes.jsonl", MISSED))
def test_a_question_or_a_polite_word_never_becomes_a_write(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
    if case["tool"] not in WRITES:  # a question is never a write
        assert not {c["name"] for c in result.calls} & WRITES, result.calls
