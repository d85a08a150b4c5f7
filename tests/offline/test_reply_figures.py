"""Figures in the offline assistant's replies as a person reads them: thousands separators on money
and large quantities, as the overview, tables and sign-off show them (the tool results stay plain)."""

from __future__ import annotations

import json
import re

from tests.support.clients import ask


def test_stock_value_in_a_reply_has_thousands_separators(app):
    body = ask(app, "staff", "库存统计")
    assert re.search(r"总值 \d{1,3}(,\d{3})+\.\d\d 元", body["reply"]), body["reply"]
    result = json.loads(body["rounds"][0]["results"][0]["content"])
    assert re.fullmatch(r"\d+\.\d\d", result["total_value_cny"])  # what the model reads stays plain
    english = ask(app, "staff", "what is our total stock worth?")
    assert re.search(r"worth CNY \d{1,3}(,\d{3})+\.\d\d", english["reply"]), english["reply"]


def test_a_large_quantity_in_a_reply_has_thousands_separators(app):
    body = ask(app, "staff", "面包袋还有多少")  # packaging is counted in thousands of pieces
    assert re.search(r"\d{1,3}(,\d{3})+ pcs", body["reply"]), body["reply"]
