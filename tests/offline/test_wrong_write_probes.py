"""Writes an audit found made on words that order nothing now, kept as cases (wrong_write_probes.jsonl
beside this file), with the orders beside them that must still write: an arrival told with its due
date (那批无盐黄油150公斤下周一到) is no purchase, an order with one is; a condition (如果淡奶油低于50升就采购20箱)
orders nothing yet, its threshold never the amount; a stock figure before the amount ordered (只剩3袋…要20袋)
and a stocktake's difference beside its count (少了2公斤，实际48) are not the amount; a transfer or a
booking planned or asked whether to (明天要把…调到主仓吗, 要不要入库…, "can I book out…") proposes nothing.
`no_write`: no write, whatever else is answered; `or_no_write`: the write named, or none."""

from __future__ import annotations

import pytest

from tests.support.probes import WRITES, cases, judged

# On main 33 of the 66 failed (WW01-WW50: 23, marked until the fix; WW51-WW66, written after it: 10).
# WW95-WW169 (a booking asked about, an arrival with what to do then, a stock remark, a count not to
# book, a quoted order; 36 of them orders that must still write): 28 failed on main, none now. WW170-WW173:
# a count said with 只有, a return of what is left, a safety stock said before the order (failed: 80 kg filed).
# WW174-WW179, orders beside those words: "When you get a moment, book in…" still reads the history first.
# WW180-WW192, more ways of saying the same (没问题吧, "on arrival", 不用调整, 还剩大概) and orders: 7 failed on main.
# WW193-WW236, from a hostile review of those words and of the next-turn corrections: orders they lost
# (能给我出库…不？, 送来了，再入库3箱, "book it in then", "leave them at dock 2", an apostrophe taken for a quote),
# 刚入的 read as the direction of an outbound booking, 少说了5公斤 booked as 5 kg, a purchase declined for
# naming a market; all failed before those words were narrowed.
# WW237-WW328, from a hostile review (a booking asked whether wise or enough, an arrival said for later, a
# count not to book, a past movement asked whether recorded, a customer's need, "oops, 30 kg not 20" after
# a booking taken for an adjustment) with variants and the orders beside them: 29 failed before the words
# were narrowed (WW237, 238, 240, 242, 244, 252-258, 268-272, 276, 287, 297, 299-301, 306, 321-325), none now.
# WW329-WW344, from the next hostile review of those words: orders they lost (an arrival told as past,
# a customer's need beside an order of the user's own, 别的不用动, 单价不用改, a system figure dismissed, 其他的你看,
# "is that enough? book out … anyway") and "I don't think you can book out…" taken as a polite order: 14 failed
# before the words were narrowed (all but WW340 and WW343, which guard the narrowing), none now.
MISSED: set[str] = {"WW174"}


@pytest.mark.parametrize("case", cases(__file__, "wrong_write_probes.jsonl", MISSED))
def test_a_write_only_when_the_message_orders_it_now(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    written = [c for c in result.calls if c["name"] in WRITES]
    if case.get("outcome") == "no_write" or (case.get("or_no_write") and not written):
        assert not written, f"{case['text']!r}: {written}"
        return
    assert result.ok, f"{case['text']!r}: {result.why} {result.calls} {result.reply[:120]!r}"
