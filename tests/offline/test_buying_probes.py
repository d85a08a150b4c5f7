"""A purchase request is filed without a confirmation, so it is filed only when the message orders it:
a purchase asked about (its price, what a pack holds, whether or how much to buy, what it would do to
the stock, worked out but not to be filed yet) looks the material up and files nothing, and an order
beside a price question or said with a price still files. Written before the fix, said other ways than
the evaluation sets; cases in buying_probes.jsonl beside this file, judged on the plant's day
2026-11-27, with a write the case does not ask for failing it. The ones still missed are marked: each
is work left, and a fix that makes one pass must unmark it (strict)."""

from __future__ import annotations

import pytest

from tests.support.probes import cases, judged

# Still missed: a purchase with only "whether to look first" asked (要不要先看看库存再说) asks which
# amount instead of showing the stock; it files nothing.
MISSED = {"BQ024"}


@pytest.mark.parametrize("case", cases(__file__, "buying_probes.jsonl", MISSED))
def test_a_purchase_asked_about_files_nothing_and_an_order_still_files(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
