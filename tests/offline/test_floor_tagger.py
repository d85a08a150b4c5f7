"""Bookings said in the floor's word order, read by the floor tagger (providers/offline/tagger.py):
the place before or after the goods, the direction word between them, packs and magnitudes, in
Chinese and English. Look-alike sentences, not sentences of any evaluation set; each was asked
"in or out?" (or "from which warehouse to which?") before the tagger."""

from __future__ import annotations

import pytest

from inventory_ai.assistant.providers.offline.tagger import SURE, tag
from tests.support.clients import ask, first_call


@pytest.mark.parametrize(
    ("text", "material", "kind", "warehouse", "quantity"),
    [
        ("冷库进奶油奶酪4箱", "M034", "inbound", "WH02", 48),  # place, way, goods, packs
        ("淡奶油10箱入冷库", "M030", "inbound", "WH02", 120),  # goods, packs, way, place
        ("淡奶油10箱进冷库", "M030", "inbound", "WH02", 120),
        ("高筋面粉8袋出主仓", "M001", "outbound", "WH01", 200),
        ("冷库发淡奶油2箱给蛋糕线", "M030", "outbound", "WH02", 24),  # a line it goes to
        ("面包线要了高筋面粉3袋", "M001", "outbound", None, 75),
        ("冷库放进去淡奶油6箱", "M030", "inbound", "WH02", 72),
        ("6 cases whipping cream in to cold store", "M030", "inbound", "WH02", 72),
        ("whipping cream x6 cases into cold store", "M030", "inbound", "WH02", 72),
        # one language's words, the other's names or a code (mixed orders in floor_grammar.json)
        ("corn oil 领了3桶 冷库", "M053", "outbound", "WH02", 60),
        ("冷库 收 whipping cream 5箱", "M030", "inbound", "WH02", 60),
        ("4袋 bread flour 进 wh1", "M001", "inbound", "WH01", 100),
    ],
)
def test_a_booking_in_the_floors_word_order_is_proposed_with_its_parts(
    app, text, material, kind, warehouse, quantity
):
    call = first_call(ask(app, "manager", text))
    assert call is not None and call["name"] == "record_stock_movement", text
    args = call["arguments"]
    assert (args["material"], args["movement_type"], args["quantity"]) == (material, kind, quantity)
    assert warehouse is None or args["warehouse"] == warehouse


def test_a_transfer_in_the_floors_word_order_goes_from_the_first_place_to_the_second(app):
    call = first_call(ask(app, "manager", "从主仓调10袋高筋面粉到冷库"))
    args = call["arguments"]
    assert (args["movement_type"], args["warehouse"], args["to_warehouse"], args["quantity"]) == (
        "transfer", "WH01", "WH02", 250,
    )  # fmt: skip


def test_the_tagger_names_each_part_of_a_transfer():
    text = "从主仓调10袋高筋面粉到冷库"
    floor = tag(text, [(1, 3, "WH"), (7, 11, "MAT"), (12, 14, "WH")])
    assert [(kind, text[start:end]) for kind, start, end in floor.parts] == [
        ("WH", "主仓"), ("MOVE", "调"), ("NUM", "10"), ("PACK", "袋"), ("MAT", "高筋面粉"), ("TO", "冷库"),
    ]  # fmt: skip
    assert floor.way == "transfer" and floor.probability > 0.8


@pytest.mark.parametrize(
    ("text", "known", "way"),
    [
        ("corn oil 出三桶 wh2", [(0, 8, "MAT"), (13, 16, "WH")], "outbound"),
        ("soybean oil 入两桶 wh3", [(0, 11, "MAT"), (16, 19, "WH")], "inbound"),
    ],
)
def test_an_english_name_among_chinese_words_and_a_warehouse_code_is_read_surely(text, known, way):
    floor = tag(text, known)  # the mixed orders of floor_grammar.json: asked "in or out?" without them
    assert [kind for kind, _s, _e in floor.parts] == [
        "MAT",
        "OUT" if way == "outbound" else "IN",
        "NUM",
        "PACK",
        "WH",
    ]
    assert floor.way == way and floor.probability >= SURE


@pytest.mark.parametrize("text", ["冷库淡奶油还有几箱？", "高筋面粉8袋出主仓了吗？"])
def test_a_question_in_the_same_words_is_no_booking(app, text):
    call = first_call(ask(app, "manager", text))
    assert call is None or call["name"] != "record_stock_movement"
