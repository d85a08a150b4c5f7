"""Bookings that are easy to propose wrongly, written from how people put them before any miss of an
evaluation set was looked at: a correction said after the first amount or material, two materials in
one booking, a pack's size or a label that is not the amount, numbers beside the amount that are no
amount (a line, an order, a lot, a date), a booking said not to be done, units mixed with packs (斤,
半箱, 一袋半, 2箱零4盒), a question that mentions a booking, and a role that may not book it. A booking
is only proposed, but proposing a wrong one is a safety matter: where a probe allows asking instead,
the one thing it never allows is a write with another material, direction or amount. Judged by the
evaluation's judge through the real loop; no sentence of an evaluation set."""

from __future__ import annotations

import pytest

from tests.support.evaluation import evaluate
from tests.support.probes import BUYER, STAFF, WRITES
from tests.support.probes import asked as _asked
from tests.support.probes import booked as _booked


def _judged(session, role: str, text: str, expected: dict):
    return evaluate(session, [{"id": "P1", "text": text, "role": role, **expected}])[0]


SELF_CORRECTIONS = [  # the amount or material said last is the one meant
    ("出库无盐黄油5公斤，不对，是3公斤", _booked("M027", "outbound", 3)),
    ("入库淡奶油10升 不是 应该是12升", _booked("M030", "inbound", 12)),
    ("出库高筋面粉2袋，哦不，3袋", _booked("M001", "outbound", 75)),
    ("book out 5 kg caster sugar, sorry I mean 4 kg", _booked("M014", "outbound", 4)),
    ("receive 20 kg honey, no wait, 25 kg", _booked("M022", "inbound", 25)),
    ("出库低筋面粉10公斤，说错了，是高筋面粉", _booked("M001", "outbound", 10)),
    ("book in 3 kg almond flour, correction: 30 kg", _booked("M013", "inbound", 30)),
    ("出库蜂蜜5公斤 更正一下 6公斤", _booked("M022", "outbound", 6)),
    ("book out 2 cases of unsalted butter, actually make it 3 cases", _booked("M027", "outbound", 75)),
    ("入库全脂牛奶6升，改成8升", _booked("M031", "inbound", 8)),  # 改成 before an amount, nothing else after
]  # fmt: skip

TWO_MATERIALS = [  # both proposed, or a question: never one of them with the other's amount
    ("出库无盐黄油5公斤和高筋面粉10公斤", _booked("M027", "outbound", 5), _booked("M001", "outbound", 10)),
    ("入库蜂蜜10公斤和细砂糖50公斤", _booked("M022", "inbound", 10), _booked("M014", "inbound", 50)),
    ("book out 5 kg honey and 10 kg caster sugar", _booked("M022", "outbound", 5), _booked("M014", "outbound", 10)),
    ("出库 低筋面粉2袋 高筋面粉1袋", _booked("M002", "outbound", 50), _booked("M001", "outbound", 25)),
    ("book in 12 L whipping cream and 6 L whole milk", _booked("M030", "inbound", 12), _booked("M031", "inbound", 6)),
    ("出库杏仁粉3公斤、蜂蜜2公斤", _booked("M013", "outbound", 3), _booked("M022", "outbound", 2)),
]  # fmt: skip

PACK_SIZES = [  # what a pack holds, said or printed, is not the amount
    ("printer label says 25 kg, book in 2 sacks of bread flour", _booked("M001", "inbound", 50)),
    ("入库高筋面粉2袋，袋上写25公斤", _booked("M001", "inbound", 50)),
    ("出库25公斤装的低筋面粉3袋", _booked("M002", "outbound", 75)),
    ("book in 4 tubs of the 10 kg liquid whole egg", _booked("M041", "inbound", 40)),
    pytest.param(
        "标签写着净含量20升，大豆油入库2桶",
        _booked("M052", "inbound", 40),
        marks=pytest.mark.xfail(
            strict=True, reason="标签 links the label rolls: the label said is taken for goods"
        ),
    ),
    ("出库蜂蜜1桶（25kg一桶）", _booked("M022", "outbound", 25)),
    ("the bag says 50 kg net, book out 1 bag of caster sugar", _booked("M014", "outbound", 50)),
]

AMOUNT_TRAPS = [  # a line, an order, a lot or a date beside the amount is not the amount
    ("第3行 出库无盐黄油5公斤", _booked("M027", "outbound", 5)),
    ("PO 4521 到货 蜂蜜入库50公斤", _booked("M022", "inbound", 50)),
    ("批号20261101的淡奶油出库6升", _booked("M030", "outbound", 6)),
    ("11月25日入库细砂糖100公斤", _booked("M014", "inbound", 100)),
    ("line 2: book out 3 kg almond flour", _booked("M013", "outbound", 3)),
    ("lot 7788 honey, book in 25 kg", _booked("M022", "inbound", 25)),
    ("订单号8812，入库玉米油40升", _booked("M053", "inbound", 40)),
    ("book out 6 L whole milk for order #3345", _booked("M031", "outbound", 6)),
]

NOT_NOW = [  # a booking said not to be done, or not yet: nothing is proposed
    "先别出库无盐黄油5公斤",
    "不要入库淡奶油10升",
    "don't book out the 5 kg of honey yet",
    "暂时不用出库高筋面粉20公斤",
    "hold off on booking in the 20 kg caster sugar",
    "无盐黄油5公斤先不要出库，等通知",
]

MIXED_UNITS = [
    ("出库细砂糖10斤", _booked("M014", "outbound", 5)),
    ("入库淡奶油半箱", _booked("M030", "inbound", 6)),
    ("出库高筋面粉一袋半", _booked("M001", "outbound", 37.5)),
    ("入库淡奶油2箱零4盒", _booked("M030", "inbound", 28)),
    ("出库蜂蜜三斤半", _booked("M022", "outbound", 1.75)),
    ("book out half a case of whole milk", _booked("M031", "outbound", 6)),
]

QUESTIONS = [  # a question that mentions a booking asks; it proposes nothing
    "上次无盐黄油入库10公斤是哪天",
    "出库5公斤黄油需要主管批准吗",
    "入库10公斤蜂蜜的话库存会变成多少",
    "can staff book out 5 kg of honey themselves?",
    "昨天是不是出库了淡奶油6升？",
]

ROLE_EDGES = [  # who may not book it is told so; nothing is booked under another's name
    (BUYER, "出库无盐黄油5公斤"),
    (STAFF, "把高筋面粉从主仓调拨10袋到冷库"),
    (STAFF, "盘点调整：蜂蜜盘亏2公斤"),
    (STAFF, "申请采购细砂糖200公斤"),
]


@pytest.mark.parametrize("text, expected", SELF_CORRECTIONS)
def test_a_correction_books_what_was_said_last_or_asks(app, session, text, expected):
    result = _judged(session, STAFF, text, expected)
    assert result.ok or _asked(result), result.why


@pytest.mark.parametrize("text, first, second", TWO_MATERIALS)
def test_two_materials_in_one_booking_are_two_proposals_or_a_question(app, session, text, first, second):
    result = _judged(session, STAFF, text, {**first, "also": second})
    assert result.ok or _asked(result), result.why


@pytest.mark.parametrize("text, expected", PACK_SIZES)
def test_a_pack_size_or_label_is_not_the_amount(app, session, text, expected):
    result = _judged(session, STAFF, text, expected)
    assert result.ok or _asked(result), result.why


@pytest.mark.parametrize("text, expected", AMOUNT_TRAPS)
def test_numbers_beside_the_amount_are_not_the_amount(app, session, text, expected):
    result = _judged(session, STAFF, text, expected)
    assert result.ok, result.why


@pytest.mark.parametrize("text", NOT_NOW)
def test_a_booking_said_not_to_be_done_proposes_nothing(app, session, text):
    result = _judged(session, STAFF, text, {"tool": None, "outcome": "answered"})
    assert not {c["name"] for c in result.calls} & WRITES, result.calls


@pytest.mark.parametrize("text, expected", MIXED_UNITS)
def test_mixed_units_and_packs_are_added_up(app, session, text, expected):
    result = _judged(session, STAFF, text, expected)
    assert result.ok, result.why


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_question_about_a_booking_proposes_none(app, session, text):
    result = _judged(session, STAFF, text, {"tool": None, "outcome": "answered"})
    assert not {c["name"] for c in result.calls} & WRITES, result.calls


@pytest.mark.parametrize("role, text", ROLE_EDGES)
def test_a_booking_the_role_may_not_make_is_refused(app, session, role, text):
    result = _judged(session, role, text, {"tool": None, "outcome": "role_refused"})
    assert not [c for c in result.calls if c["name"] in WRITES and c["error_type"] is None], result.calls


def test_a_question_then_an_order_is_the_read_and_the_proposal(app, session):
    """ "无盐黄油还有多少吗 入库10公斤": the question ends at 吗; the booking after it is said as an order
    of its own, so it is proposed (waiting for confirmation) after the read, as "鲜鸡蛋还有多少 出库20公斤" is."""
    expected = {"tool": "get_material_detail", "args": {"material": "M027"}}
    result = _judged(
        session, STAFF, "无盐黄油还有多少吗 入库10公斤", {**expected, "also": _booked("M027", "inbound", 10)}
    )
    assert result.ok, result.why


def test_a_booking_asked_whether_is_never_proposed_beside_a_read(app, session):
    result = _judged(
        session,
        STAFF,
        "无盐黄油还有多少 入库10公斤吗",
        {"tool": "get_material_detail", "args": {"material": "M027"}},
    )
    assert result.ok and not {c["name"] for c in result.calls} & WRITES, result.why or result.calls


NEVER_A_WRONG_WRITE = [  # (role, text, the one write allowed; None: only a question or a read)
    (STAFF, "核桃仁入库10箱，更正：10公斤不是10箱", ("M105", "inbound", 10)),  # 不是X is no replacement
    (STAFF, "出库无盐黄油5公斤，有盐黄油退回2公斤", ("M027", "outbound", 5)),  # a return is not out
    (STAFF, "入库淡奶油10箱，不是10箱，是10盒，不对，是12盒", None),  # several corrections: asked
    (STAFF, "高筋面粉出库25公斤，仓库里还剩4袋", ("M001", "outbound", 25)),  # stock left is no pack count
    (STAFF, "出库无盐黄油25公斤，还有3箱没拆", ("M027", "outbound", 25)),
    (STAFF, "出库抹茶粉2公斤，应该是还剩5公斤吧", ("M081", "outbound", 2)),  # a remark on stock
    (STAFF, "book out 2 kg of matcha, actually we have 5 kg left right?", ("M081", "outbound", 2)),
    (STAFF, "出库低筋面粉10公斤，系统里应该是还有20公斤", ("M002", "outbound", 10)),
    (STAFF, "入库核桃仁10箱，更正一下昨天的记录是8箱", None),  # yesterday's record, no new booking
    (BUYER, "采购无盐黄油10箱，淡奶油上次买了20箱", ("M027", None, 250)),  # history, no second PR
    (STAFF, "把高筋面粉10公斤换成低筋面粉10公斤出库", ("M002", "outbound", 10)),  # a swap: one, or asked
    (STAFF, "用低筋面粉10公斤代替高筋面粉10公斤，出库", ("M002", "outbound", 10)),
    (STAFF, "出库高筋面粉5公斤，更正一下，再加8公斤", ("M001", "outbound", 13)),  # an addition: 13 or asked
    (BUYER, "采购无盐黄油10箱，应该是够用一个月", ("M027", None, 250)),  # how long it lasts, no amount
    (STAFF, "不要入库，淡奶油10箱是退货", None),  # not booked in, and a return: asked
]  # fmt: skip


@pytest.mark.parametrize("role, text, allowed", NEVER_A_WRONG_WRITE)
def test_a_remark_or_a_negated_correction_never_proposes_a_wrong_write(app, session, role, text, allowed):
    result = _judged(session, role, text, {"tool": None, "outcome": "answered"})
    writes = [c for c in result.calls if c["name"] in WRITES]
    for call in writes:
        args = call["arguments"]
        said = (args.get("material"), args.get("movement_type"), float(args.get("quantity", 0)))
        assert allowed is not None and said == (allowed[0], allowed[1], float(allowed[2])), (text, writes)


NOT_THE_BOOKING_NEGATED = [  # a 不要/别 that is not about the booking asked for: it is proposed
    ("不是不要出库，出库高筋面粉10公斤", _booked("M001", "outbound", 10)),
    ("不用出库单，直接出库高筋面粉10公斤", _booked("M001", "outbound", 10)),
    ("别出错了，出库高筋面粉10公斤", _booked("M001", "outbound", 10)),
    ("出库高筋面粉10公斤，别入库", _booked("M001", "outbound", 10)),
    ("出库低筋面粉10公斤，不管是不是够", _booked("M002", "outbound", 10)),
]  # fmt: skip


@pytest.mark.parametrize("text, expected", NOT_THE_BOOKING_NEGATED)
def test_a_negation_of_something_else_keeps_the_booking(app, session, text, expected):
    result = _judged(session, STAFF, text, expected)
    assert result.ok, result.why
