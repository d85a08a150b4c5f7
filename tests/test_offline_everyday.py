"""The offline assistant on the kinds of request the fifth round of fresh outside sets (outside_l,
outside_m, outside_n, written by helpers who had not read the code) showed it did not understand.
Each test is a class of request in look-alike sentences, not a sentence of those sets."""

from __future__ import annotations

import pytest

from tests.test_offline_generalising import first_call
from tests.test_offline_provider import ask


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # what happened, asked about: the movements, their direction from the verb
        ("staff", "前天面包袋入了多少个", "get_stock_movements", {"material": "M091", "movement_type": "inbound"}),
        ("staff", "has the salted butter come in yet?", "get_stock_movements",
         {"material": "M028", "movement_type": "inbound"}),
        ("staff", "上周那批黑麦粉是谁签收的", "get_stock_movements", {"material": "M005", "movement_type": "inbound"}),
        ("purchaser", "when did the honey last come in", "get_stock_movements",
         {"material": "M022", "movement_type": "inbound"}),
        ("manager", "all the transfers from yesterday please, something went to the wrong place",
         "get_stock_movements", {"movement_type": "transfer"}),
        # a request put as a question is still a request; without an amount it asks how much
        ("manager", "Could you move some of the mascarpone to the main warehouse when you have a moment?",
         None, None),
        # amounts in two parts, a full case, a date that is no amount, a size that is no amount
        ("manager", "stocktake: unsalted butter is 2 full cases plus 5 kg", "record_stock_movement",
         {"material": "M027", "movement_type": "adjustment", "quantity": 55}),
        ("manager", "冷库炼乳盘点，实际3箱零2罐", "record_stock_movement", {"material": "M036", "quantity": 38}),
        ("purchaser", "帮我提一个采购申请：全麦面粉 200公斤，下周五前到", "create_purchase_request",
         {"material": "M004", "quantity": 200}),
        ("purchaser", "what is the reorder point on the 8 inch cake boxes?", "get_material_detail",
         {"material": "M092"}),
        ("purchaser", "I'd like to request 6 boxes of butter sheet for next week's launch",
         "create_purchase_request", {"material": "M029"}),
        # goods that just arrived are booked in, even with a warehouse and no "from"
        ("staff", "刚到 3 箱 cream cheese, 冷库", "record_stock_movement",
         {"material": "M034", "movement_type": "inbound", "warehouse": "WH02"}),
        # a warehouse said by the building it stands in
        ("manager", "冷冻蓝莓三箱 A栋挪到冷库", "record_stock_movement",
         {"material": "M124", "warehouse": "WH01", "to_warehouse": "WH02"}),
    ],
)  # fmt: skip
def test_events_requests_and_amounts_in_everyday_words(app, role, text, tool, expected):
    body = ask(app, role, text)
    if tool is None:
        assert body["rounds"] == [] and "?" in body["reply"]
        return
    call = first_call(body)
    assert call["name"] == tool
    assert {k: call["arguments"].get(k) for k in expected} == expected


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("明胶片还剩多少", "M147"),  # what the trade calls it
        ("低粉还有几袋", "M002"),
        ("how much bicarb have we got", "M069"),
        ("他他粉还有多少", "M071"),  # typed with a character that sounds the same
        ("红丝绒那个可可粉还有吗", "M141"),  # one name said in two parts
    ],
)
def test_a_material_by_its_trade_name_a_homophone_or_in_two_parts(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("泡打粉 两种都还有吗", {"keyword": "泡打粉"}),  # every kind the name covers
        ("anything called 'sugar' in the system?", {"keyword": "sugar"}),
        ("show me everything coconut-based we keep", {"keyword": "coconut"}),
        ("a quick look at all the flours we carry - bread, cake, rye, the lot", {"category": "FL"}),
    ],
)
def test_a_search_for_what_the_request_marks(app, text, arguments):
    call = first_call(ask(app, "purchaser", text))
    assert call["name"] == "search_materials"
    assert {k: call["arguments"].get(k) for k in arguments} == arguments


@pytest.mark.parametrize(
    ("text", "first_item", "fmt"),
    [
        ("make a csv: flour 12 bags, sugar 8 bags, eggs 40kg", "flour", "csv"),
        ("帮我整理成表格：淡奶油 5箱；奶油奶酪 2箱；黄油 3箱", "淡奶油", "markdown"),
    ],
)
def test_a_table_of_rows_the_user_typed(app, text, first_item, fmt):
    body = ask(app, "staff", text)
    call = first_call(body)
    assert call["name"] == "format_report" and call["arguments"]["format"] == fmt
    rows = call["arguments"]["rows"]
    assert first_item in rows[0].values() and len(rows) == 3
    result = body["rounds"][0]["results"][0]
    assert result["status"] == "success" and first_item in result["content"]  # the table is made


@pytest.mark.parametrize(
    ("text", "tool", "phrase"),
    [
        ("教一下 '要料' 就是搜物料", "search_materials", "要料"),
        ('Staff keep typing "got any" when they want to find an item. Could you set that up so it runs the '
         "material search?", "search_materials", "got any"),
        ('When people say "table it" they want a CSV - could you map that phrase to the report formatter?',
         "format_report", "table it"),
        ("教你：“发货” 都是记出入库用的", "record_stock_movement", "发货"),
    ],
)  # fmt: skip
def test_teaching_said_in_more_ways(app, text, tool, phrase):
    call = first_call(ask(app, "admin", text))
    assert call["name"] == "create_new_intent"
    assert call["arguments"]["tool_name"] == tool and phrase in call["arguments"]["keywords"]


def test_a_request_typed_in_pinyin_is_booked(app):
    call = first_call(ask(app, "staff", "gaojin mianfen ling le 2 dai, chu ku"))
    assert call["name"] == "record_stock_movement"
    assert (
        call["arguments"]["material"],
        call["arguments"]["movement_type"],
        call["arguments"]["quantity"],
    ) == (
        "M001",
        "outbound",
        50,
    )


@pytest.mark.parametrize(
    ("role", "text", "tool"),
    [
        # the new rules do not overreach
        ("staff", "what came into the cold store yesterday?", "get_stock_movements"),
        ("purchaser", "糖类有没有低于补货点的", "list_low_stock"),
        ("staff", "is any of the dairy below its reorder point?", "list_low_stock"),
        ("staff", "it's freezing in building C this morning, will it snow tomorrow?", None),
        ("staff", "烘焙房拿走了十二罐脱模油", "record_stock_movement"),
        ("staff", "anything coconut? the pastry team wants to try a coconut tart", "search_materials"),
    ],
)
def test_the_new_rules_do_not_overreach(app, role, text, tool):
    body = ask(app, role, text)
    call = first_call(body)
    assert (call["name"] if call else None) == tool
