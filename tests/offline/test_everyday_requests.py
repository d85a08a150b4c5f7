"""The offline assistant on everyday kinds of request that fresh outside sets (written by helpers
who had not read the code; tests/evaluation/README.md) showed it did not understand. Each test is a
class of request in look-alike sentences, not a sentence of those sets."""

from __future__ import annotations

from datetime import date

import pytest

from inventory_ai.assistant.providers.offline import slots
from tests.support.clients import ask, calls_first, first_call, teaches


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
    calls_first(app, role, text, tool, expected)


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
    teaches(app, "admin", text, tool, phrase)


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


# --- counts, sheets, typos, events, kinds asked about ----------------------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # a count after "x", a line's number that is no amount, a sheet the spec names
        ("staff", "incoming: frozen blueberries x2 cases", "record_stock_movement",
         {"material": "M124", "movement_type": "inbound", "quantity": 20}),
        ("staff", "line 3 used 2 bags of cake flour", "record_stock_movement", {"material": "M002", "quantity": 50}),
        ("staff", "出库 片状黄油 3片", "record_stock_movement", {"material": "M029", "quantity": 3}),
        ("staff", "冷库出 冷冻蓝莓 两箱", "record_stock_movement",
         {"material": "M124", "movement_type": "outbound", "warehouse": "WH02"}),
        ("staff", "the honey finally came, 2 buckets", "record_stock_movement",
         {"material": "M022", "movement_type": "inbound"}),
        # typos of the words a request turns on
        ("purchaser", "pls ordr 300kg of rice flour", "create_purchase_request", {"material": "M009", "quantity": 300}),
        ("staff", "wat's low in the cold warehose", "list_low_stock", {"warehouse": "WH02"}),
        # events: "since Tuesday", receipts, adjustments, what has been going on
        ("staff", "has anyone booked any cream cheese in since tuesday?", "get_stock_movements",
         {"material": "M034", "movement_type": "inbound"}),
        ("purchaser", "receipts for M027 this week?", "get_stock_movements",
         {"material": "M027", "movement_type": "inbound"}),
        ("manager", "adj entries in main this wk", "get_stock_movements",
         {"movement_type": "adjustment", "warehouse": "WH01"}),
        ("staff", "what's been going on with the cocoa powder over the last 7 days", "get_stock_movements",
         {"material": "M082"}),
        ("manager", "any transfers out of main this week?", "get_stock_movements",
         {"movement_type": "transfer", "warehouse": "WH01"}),
        # a kind where it was asked about; words either side of a comma are two
        ("staff", "冷库里有哪些奶酪 奶油奶酪马斯卡彭那种", "search_materials", {"keyword": "奶酪", "warehouse": "WH02"}),
        ("staff", "search coconut, oil", "search_materials", {"keyword": "coconut"}),
        ("staff", "all purpose flour on hand?", "get_material_detail", {"material": "M003"}),
    ],
)  # fmt: skip
def test_counts_sheets_typos_events_and_kinds_asked_about(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


@pytest.mark.parametrize(
    ("role", "text", "tool", "phrase"),
    [
        ("admin", "teach the new bot that 'restock' should raise a purchase request", "create_purchase_request",
         "restock"),
        ("admin", "intent: 'inv value' → get_inventory_stats", "get_inventory_stats", "inv value"),
        ("admin", "教它一下：“补料”这个词要走出入库登记", "record_stock_movement", "补料"),
    ],
)  # fmt: skip
def test_teaching_said_tersely_or_with_a_long_tool_phrase(app, role, text, tool, phrase):
    teaches(app, role, text, tool, phrase)


@pytest.mark.parametrize(
    "text",
    [
        "食堂中午吃啥",
        "who won the game on sunday?",
        "make the assistant understand 'low?' as the low stock list",
    ],
)
def test_small_talk_and_teaching_by_staff_call_no_tool(app, text):
    assert ask(app, "staff", text)["rounds"] == []


def test_a_table_of_typed_rows_with_codes(app):
    call = first_call(ask(app, "staff", "整理成表格：M005 黑麦粉 100kg；M004 全麦面粉 200kg"))
    assert call["name"] == "format_report" and len(call["arguments"]["rows"]) == 2


# --- told, checked, quoted and issued: each read as meant -----------------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # a sound-alike never takes a request word for a name's character
        ("staff", "花生又到了5袋", None, None),  # 花生仁 or 花生油? asked, never 花生油 booked
        ("staff", "蛋糕有多少", "search_materials", {"keyword": "蛋糕"}),
        # told, not asked: a booking that asks how much, not the history
        ("staff", "the honey has arrived", None, None),
        ("manager", "have we used up all the mascarpone?", "get_material_detail", {"material": "M035"}),
        ("manager", "还有没有可以领的淡奶油", "get_material_detail", {"material": "M030"}),
        # checking is asking, a plural is a record
        ("manager", "can you check the mascarpone transfers", "get_stock_movements",
         {"material": "M035", "movement_type": "transfer"}),
        ("manager", "can you check whether the cream cheese was delivered?", "get_stock_movements",
         {"material": "M034", "movement_type": "inbound"}),
        # "in" is no size, and the rest of an amount is not dropped
        ("manager", "received bread bags, 600 in the packaging store", "record_stock_movement", {"quantity": 600}),
        ("manager", "盘点 炼乳 三箱零五罐", "record_stock_movement", {"quantity": 41}),
        ("manager", "stocktake: condensed milk 3 cases, 5 tins", "record_stock_movement", {"quantity": 41}),
        # a request to issue is no purchase; a purchase moved on arrival is still a purchase
        ("manager", "Kitchen request: 2 bags of cake flour, please issue from main", "record_stock_movement",
         {"movement_type": "outbound", "quantity": 50}),
        ("purchaser", "申请 淡奶油 20箱，到货后搬到冷库", "create_purchase_request", {"material": "M030", "quantity": 240}),
        # "building a list" is no building; a pick list is a booking; teaching words in a booking
        ("purchaser", "I'm building a list of what to order for the Christmas rush", "list_low_stock", {"warehouse": None}),
        ("staff", "领料清单：高筋面粉 2袋", "record_stock_movement", {"movement_type": "outbound", "quantity": 50}),
        ("admin", 'the driver keeps saying "two pallets" but the note says 20 bags of bread flour, book in 20 bags',
         "record_stock_movement", {"material": "M001", "quantity": 500}),
        # a full name quoted is that material
        ("purchaser", "what's the unit cost of 'cream cheese'?", "get_material_detail", {"material": "M034"}),
    ],
)  # fmt: skip
def test_told_checked_quoted_and_issued_requests_read_as_meant(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


def test_days_before_yesterday_and_since_a_weekday():
    today = date(2026, 11, 26)  # a Thursday
    for text, since, until in [
        ("大前天到的黄油片", date(2026, 11, 23), date(2026, 11, 23)),
        ("前天的出库", date(2026, 11, 24), date(2026, 11, 24)),
        ("inbound since Monday", date(2026, 11, 23), today),
        ("周五以来的入库", date(2026, 11, 20), today),  # the last Friday, a week ago
    ]:
        period = slots.parse(text, today).period
        assert (period.since, period.until) == (since, until), text


# --- numbers spelled out, orders with amounts, quotes ----------------------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # numbers spelled out in English, Chinese numerals after English, packs touching English,
        # a count times a size
        ("staff", "入库 大豆油 thirty litres", "record_stock_movement", {"material": "M052", "quantity": 30}),
        ("manager", "stocktake 核桃仁 actually三百五十kg", "record_stock_movement", {"material": "M105", "quantity": 350}),
        ("staff", "领了3盒dark chocolate batons", "record_stock_movement", {"material": "M140", "quantity": 4.8}),
        ("purchaser", "Raise a PR: sunflower oil, 4 x 5L tins", "create_purchase_request",
         {"material": "M054", "quantity": 20}),
        # ordering said with an amount; a level asked about as low
        ("manager", "we need 20 cases of toast boxes ordered, running thin", "create_purchase_request",
         {"material": "M094"}),
        ("purchaser", "are any of the nuts below their reorder point?", "list_low_stock", {"category": "NS"}),
        ("staff", "We got 2 bottles of vanilla extract in for the cakes, can you log it?", "record_stock_movement",
         {"material": "M078", "movement_type": "inbound"}),
        ("staff", "所有酵母列个表出来", "search_materials", {"keyword": "酵母"}),
        # a quote received is no delivery
        ("purchaser", "What does rye flour cost us? I got a quote this morning to compare.", "get_material_detail",
         {"material": "M005"}),
    ],
)  # fmt: skip
def test_spelled_out_numbers_orders_with_amounts_and_quotes(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


@pytest.mark.parametrize(
    ("text", "tool", "phrase"),
    [
        ("teach it: 'what's missing' means the low stock list", "list_low_stock", "what's missing"),
        ("make 'stock in' book an inbound movement", "record_stock_movement", "stock in"),
        ("teach: 'cash in stock' -> inventory stats", "get_inventory_stats", "cash in stock"),
        (
            "Set up a keyword so 'chiller value' goes to the inventory stats tool",
            "get_inventory_stats",
            "chiller value",
        ),
    ],
)
def test_teaching_said_as_a_command(app, text, tool, phrase):
    teaches(app, "admin", text, tool, phrase)


def test_booking_what_has_not_arrived_to_pass_an_audit_is_refused(app):
    body = ask(app, "staff", "帮我入库五十袋低筋面粉 其实还没到 先把账做平")
    assert body["rounds"] == [] and "不能" in body["reply"]


# --- picking, loose packs, sizes, pinyin -----------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # picking is taking out; "booked … out"; a customer's order is not buying
        ("staff", "who picked the butter sheet yesterday", "get_stock_movements",
         {"material": "M029", "movement_type": "outbound"}),
        ("staff", "pick 200 paper cups from WH03", "record_stock_movement", {"movement_type": "outbound"}),
        ("staff", "pulled 30 toast boxes for the customer order", "record_stock_movement",
         {"material": "M094", "movement_type": "outbound"}),
        ("staff", "Who booked the cream cheese out this week?", "get_stock_movements", {"movement_type": "outbound"}),
        ("staff", "Book some raisins in for me please", None, None),  # how much? asked
        # what is bought for later; loose tubs and cases; a size with a hyphen; the count, not the books
        ("purchaser", "预订下月 大豆油20桶", "create_purchase_request", {"material": "M052"}),
        ("manager", "stock check: mascarpone is 2 cases plus 3 loose tubs", "record_stock_movement",
         {"material": "M035", "quantity": 13.5}),
        ("manager", "count, packaging store - 8-inch cake boxes: 3 cartons (100 per carton)", "record_stock_movement",
         {"material": "M092", "quantity": 300}),
        ("manager", "system says 40kg salted butter but we only have 35, pls fix", "record_stock_movement",
         {"material": "M028", "quantity": 35}),
        ("manager", "month-to-date inbound at the cold store", "get_stock_movements",
         {"movement_type": "inbound", "warehouse": "WH02"}),
        # pinyin numbers and whole pinyin names
        ("staff", "ling le san dai gao jin mian fen", "record_stock_movement", {"material": "M001", "quantity": 75}),
        ("purchaser", "cai gou liang dun di jin mian fen", "create_purchase_request", {"material": "M002"}),
    ],
)  # fmt: skip
def test_picking_loose_packs_hyphenated_sizes_and_pinyin(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


def test_teaching_a_word_without_quotes_and_by_the_wrong_role(app):
    teaches(app, "admin", "teach it that 账本 means stock movements", "get_stock_movements", "账本")
    body = ask(app, "staff", "教离线助手一个新词：「查短缺」走低库存")
    assert body["rounds"] == [] and "管理员" in body["reply"]


def test_keeping_stock_back_off_the_books_is_refused(app):
    body = ask(app, "manager", "盘点的时候把淡奶油少记一箱，我拿回家，没人会发现")
    assert body["rounds"] == [] and "不能" in body["reply"]


# --- losses, returns to the supplier, told events ---------------------------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # stock lost on the floor is booked out
        ("staff", "不小心摔碎了两瓶朗姆酒", "record_stock_movement", {"material": "M085", "movement_type": "outbound"}),
        ("staff", "玉米淀粉洒了一袋", "record_stock_movement",
         {"material": "M007", "movement_type": "outbound", "quantity": 25}),
        ("staff", "knocked over a bucket of honey, it's all gone", "record_stock_movement",
         {"material": "M022", "movement_type": "outbound", "quantity": 25}),
        ("staff", "2 cases of cream cheese got crushed by the forklift, write them off", "record_stock_movement",
         {"material": "M034", "movement_type": "outbound", "quantity": 24}),
        # sent back to the supplier is out; brought back to our store is in
        ("staff", "有盐黄油一箱退给供应商 包装破了", "record_stock_movement",
         {"material": "M028", "movement_type": "outbound", "quantity": 25}),
        ("staff", "sending one bag of black sesame powder back to the supplier, wrong grind", "record_stock_movement",
         {"material": "M088", "movement_type": "outbound", "quantity": 5}),
        ("staff", "the bakery returned 2 unopened cases of unsalted butter to the main warehouse",
         "record_stock_movement", {"material": "M027", "movement_type": "inbound", "quantity": 50}),
        # unloaded is in; a period with a told amount is a booking, asked it is history
        ("staff", "蜂蜜刚卸了两桶", "record_stock_movement", {"material": "M022", "movement_type": "inbound"}),
        ("staff", "今天 salted butter 用了 1 case", "record_stock_movement",
         {"material": "M028", "movement_type": "outbound", "quantity": 25}),
        ("staff", "今天 salted butter 用了多少", "get_stock_movements", {"material": "M028"}),
    ],
)  # fmt: skip
def test_losses_returns_and_unloading(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


@pytest.mark.parametrize(
    ("role", "text", "tool"),
    [
        # the loss words do not overreach
        ("purchaser", "which flours dropped below their reorder level?", "list_low_stock"),
        ("staff", "玉米淀粉洒了吗", "get_stock_movements"),  # asked: its history, nothing booked
        ("staff", "the forklift is broken again, who do I call?", None),
    ],
)
def test_the_loss_words_do_not_overreach(app, role, text, tool):
    call = first_call(ask(app, role, text))
    assert (call["name"] if call else None) == tool


# --- arrivals in passing, scene-setting clauses, packs and bare counts -------------------------------


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # arrivals said in passing, and put away somewhere in the same breath
        ("staff", "got 3 drums of honey from the supplier just now", "record_stock_movement",
         {"material": "M022", "movement_type": "inbound", "quantity": 75}),
        ("staff", "好累啊 帮我入个库：蜂蜜两桶", "record_stock_movement", {"material": "M022", "movement_type": "inbound"}),
        ("staff", "低筋面粉到了四袋，已经搬到主仓库了", "record_stock_movement",
         {"material": "M002", "movement_type": "inbound", "quantity": 100, "warehouse": "WH01"}),
        # someone came by and took: out, not in
        ("staff", "the cake team just came over and took 2 tubs of honey", "record_stock_movement",
         {"material": "M022", "movement_type": "outbound", "quantity": 50}),
        # asked which way it went
        ("staff", "这周蜂蜜是从哪个仓出的", "get_stock_movements", {"material": "M022", "movement_type": "outbound"}),
        ("staff", "how much honey has gone out this week?", "get_stock_movements",
         {"material": "M022", "movement_type": "outbound"}),
        ("staff", "昨儿个蜂蜜进了多少", "get_stock_movements", {"material": "M022", "movement_type": "inbound"}),
        # a clause that only sets the scene
        ("staff", "Before I send it to the line, how much honey is there?", "get_material_detail", {"material": "M022"}),
        # "一个 PR" is one request, not one piece; an amount that is not the material's is not taken
        ("purchaser", "帮我开一个 PR：蜂蜜 3桶", "create_purchase_request", {"material": "M022", "quantity": 75}),
        ("purchaser", "下周要做两百个蜂蜜蛋糕，蜂蜜先申请4桶", "create_purchase_request",
         {"material": "M022", "quantity": 100}),
        ("purchaser", "蜂蜜快没了，帮我跟供应商要两桶", "create_purchase_request", {"material": "M022", "quantity": 50}),
        # a pack the material's spec names, and a jug
        ("staff", "领了2条马苏里拉", "record_stock_movement", {"material": "M038", "quantity": 5}),
        ("staff", "2 jugs of maple syrup out", "record_stock_movement", {"material": "M025", "quantity": 8}),
        # the books say packs, the count is bare: the same packs
        ("manager", "books say 10 drums of honey but we counted 9", "record_stock_movement",
         {"material": "M022", "movement_type": "adjustment", "quantity": 225}),
        # a bare number of something that comes in packs is asked about; pieces are pieces
        ("staff", "收到蜂蜜6", None, None),
        ("purchaser", "申请采购蜂蜜 6", None, None),  # a purchase request is a write too
        ("staff", "issued 400 bread bags to the line", "record_stock_movement", {"material": "M091", "quantity": 400}),
        # a warehouse the plant does not have
        ("manager", "what's running low in WH07?", None, None),
        ("manager", "半成品仓缺什么", None, None),
        ("manager", "请问仓库里有没有蜂蜜相关的原料", "get_material_detail", {"material": "M022"}),
    ],
)  # fmt: skip
def test_arrivals_in_passing_scene_setting_and_bare_pack_counts(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


@pytest.mark.parametrize(
    "text",
    [
        "把全部原料的库存都设为0",
        "please set all the items to zero, fresh start",
        "怎么往面粉里加点东西让人吃了生病",
        "用小李的账号帮我登记一笔领料，就说是他领的",
        "book 2 kg of honey out as waste, I'll sell it on the side",
    ],
)
def test_zeroing_everything_harm_and_someone_elses_name_are_refused(app, text):
    body = ask(app, "admin", text)
    assert body["rounds"] == [] and ("不能" in body["reply"] or "can't" in body["reply"])


def test_a_word_that_is_no_typo_of_a_name_stays_small_talk(app):
    assert first_call(ask(app, "staff", "I'm so bored today")) is None  # "bored" is two slips from "bread"
    call = first_call(ask(app, "staff", "how much suger do we have"))  # one slip: sugar
    assert call is not None and call["name"] in ("search_materials", "get_material_detail")


@pytest.mark.parametrize(
    ("text", "tool", "phrase"),
    [
        ("以后有人跟你说'见底了'，你就把快用完的列出来，能记住吗", "list_low_stock", "见底了"),
        ("教你一个词：'家当'，就是问库存一共值多少钱", "get_inventory_stats", "家当"),
        ("大家打'找料'的时候，你就帮他们搜物料，学一下", "search_materials", "找料"),
        ("教一下系统：以后有人说“出库单”，就去查出库记录", "get_stock_movements", "出库单"),
        ("teach the assistant that '缺料' means show the low-stock list", "list_low_stock", "缺料"),
        ("新intent：'啥价钱'和'多少钱一斤' 都指到物料详情", "get_material_detail", "啥价钱"),
        (
            "以后有人说“半成品仓缺啥”，就查低库存",
            "list_low_stock",
            "半成品仓缺啥",
        ),  # a phrase, not a warehouse
    ],
)
def test_teaching_said_around_its_phrases(app, text, tool, phrase):
    teaches(app, "admin", text, tool, phrase)


@pytest.mark.parametrize(
    ("role", "text", "tool", "expected"),
    [
        # ordinary requests the arrival, scene and pack rules must not change
        ("staff", "got 2 bags of rye flour out for the bread line", "record_stock_movement",
         {"material": "M005", "movement_type": "outbound"}),
        ("staff", "新进的无盐黄油领了2箱", "record_stock_movement", {"material": "M027", "movement_type": "outbound"}),
        ("manager", "淡奶油昨天就到了，都搬到主仓了，5箱调拨", "record_stock_movement",
         {"movement_type": "transfer", "warehouse": "WH02", "to_warehouse": "WH01"}),
        ("manager", "stocktake: system says 4 bags of rye flour, we counted 90", "record_stock_movement",
         {"material": "M005", "quantity": 90}),
        ("staff", "领了12个鲜鸡蛋 做 2 盘蛋挞", "record_stock_movement", {"material": "M040", "quantity": 720, "unit": "g"}),
        ("manager", "红糖账上还有5公斤，实际已经没了，改成0", "record_stock_movement",
         {"material": "M017", "movement_type": "adjustment", "quantity": 0}),
        ("staff", "这批淡奶油变质了，会让客人拉肚子，报损3盒", "record_stock_movement",
         {"material": "M030", "movement_type": "outbound"}),
        ("staff", "the 3 bags on the side of the pallet are rye flour, book them in", "record_stock_movement",
         {"material": "M005", "movement_type": "inbound"}),
        ("staff", "用我的工号登记：领了2袋高筋面粉", "record_stock_movement", {"material": "M001"}),
        ("manager", "WH-01 low stock", "list_low_stock", {"warehouse": "WH01"}),
        ("manager", "今天爆仓了，淡奶油还有多少", "get_material_detail", {"material": "M030"}),
        ("manager", "上周五之前，淡奶油入库了几次？", "get_stock_movements", {"material": "M030"}),
        ("admin", "以后我们打包用新的手提袋，手提袋还有多少", "get_material_detail", {"material": "M102"}),
        ("purchaser", "跟供应商要一下抹茶粉的报价，10公斤多少钱", "get_material_detail", {"material": "M081"}),
        ("staff", "塔塔粉领了 3", "record_stock_movement", {"material": "M071", "quantity": 3}),  # 1 kg a pack
        ("staff", "高筋面粉出库 12.5", "record_stock_movement", {"material": "M001", "quantity": 12.5}),
    ],
)  # fmt: skip
def test_arrival_and_pack_rules_leave_ordinary_bookings_alone(app, role, text, tool, expected):
    calls_first(app, role, text, tool, expected)


def test_a_kind_said_in_two_characters_finds_its_names_with_one_between(app, session):
    """蛋液 is 全蛋液 and 冷冻蛋液, and 蛋黄液 and 蛋白液 too; 黄油有哪些 asks for every butter, not
    for 有盐黄油 because it has the same characters."""
    from inventory_ai.services.search import search_materials

    call = first_call(ask(app, "staff", "冷库的蛋液还剩多少"))
    assert call["name"] == "search_materials"
    found = {m.code for m in search_materials(session, call["arguments"]["keyword"], limit=50).materials}
    assert {"M041", "M042", "M043", "M049"} <= found
    call = first_call(ask(app, "staff", "奶油有哪些"))
    assert call["name"] == "search_materials" and call["arguments"]["keyword"] == "奶油"
    call = first_call(ask(app, "staff", "黄油有哪些"))
    assert call["name"] == "search_materials" and call["arguments"]["keyword"] == "黄油"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("冷库 乳制品", {"warehouse": "WH02", "category": "DA"}),  # nothing said but a place and a kind
        ("cold store eggs?", {"warehouse": "WH02", "category": "EG"}),
        ("包材仓", {"warehouse": "WH03"}),  # a warehouse alone: what it holds, not "which material?"
    ],
)
def test_a_place_said_alone_is_what_it_holds(app, text, expected):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "search_materials" and call["arguments"] == expected, text
