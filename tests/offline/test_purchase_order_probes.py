"""A purchase request is filed without a confirmation, so a message files one only when it orders it
now. The cases come from a hostile review of the offline assistant's purchases (421 probes written
against it, most of them messages that must not file): the ones main filed a request for that nobody
ordered (a reminder or a plan, one told as done or someone else's, its record or status, a draft or a
how-to, a question about its price or whether to buy) and now look the material up, and every order
that files as it should (an order beside a price question or said with a price, polite orders, due
dates, pack sizes beside the amount). Cases in purchase_order_probes.jsonl beside this file, judged on
the plant's day 2026-11-27, with a write the case does not ask for failing it."""

from __future__ import annotations

import pytest

from tests.support.probes import cases, judged


@pytest.mark.parametrize("case", cases(__file__, "purchase_order_probes.jsonl", set()))
def test_a_purchase_request_is_filed_only_when_the_message_orders_it(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
