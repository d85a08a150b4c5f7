"""Issue 36's hard tail that stayed weak, written as a spec before any miss of an evaluation set was
read: a question about past movements that holds booking words and numbers (抹茶粉过去三个月的出库量,
"how much unsalted butter went out in October") is the history, never a booking; a booking in the
floor's word order (冷库入芒果果泥 6箱, "cold store in whipping cream 6 ctn") is booked; a question that
is not the warehouse's but names a material (a recipe, a market price, health) is declined with no
tool; a correction in the turn after a declined booking ("不对，是8袋", "sorry, make that 30 kg",
"错了，是低筋的") books the corrected amount or material; two asks in one message are two calls.
About half are controls that read or write as they did before. The cases are in tail_probes.jsonl
beside this file, judged by meaning on the plant's day; a case still missed is marked (strict).
TP001-TP109 were written before any miss was read; TP110-TP148 after reading the odd ids' misses of
dev_gl, dev_gm and dev_gn, as variants of their kinds (never their sentences), with controls beside."""

from __future__ import annotations

import pytest

from tests.support.probes import answered_as_asked, cases

# Still missed (work left): a booking in the floor's order after words that only say to log it
# (麻烦登记一下，…, 帮忙记一下 …): the tagger reads 一下 as an amount. A retrained tagger read them, but
# booked "got 2 bags of rye flour out for the bread line" in and was kept out. First run, before any
# change: 97/109 (out of scope 8/12, corrections in the next turn 6/12); now 151/153.
MISSED = {"TP118", "TP119"}


@pytest.mark.parametrize("case", cases(__file__, "tail_probes.jsonl", MISSED))
def test_history_floor_orders_scope_and_corrections_as_people_say_them(app, session, monkeypatch, case):
    answered_as_asked(app, session, monkeypatch, case)
