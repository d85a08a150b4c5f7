"""The evaluation judge (tests/support/evaluation.py) on the fields the fresh outside sets use: dates
given as `since`/`until`/`needed_by`, earlier turns of the same conversation (`context`) and a
second call that must come later (`also`), and a write nobody asked for."""

from __future__ import annotations

from datetime import date

import pytest

from tests.support.evaluation import check_also, check_arguments, evaluate, unasked_write

TODAY = date(2026, 11, 27)


@pytest.mark.parametrize(
    ("expected", "called", "right"),
    [
        (
            {"since": "2026-09-01", "until": "2026-09-30"},
            {"since": "2026-09-01", "until": "2026-09-30"},
            True,
        ),
        ({"since": "2026-09-01", "until": "2026-09-30"}, {"since": "2026-09-01"}, False),  # runs to today
        ({"since": "2026-11-10"}, {"since": "2026-11-10"}, True),  # open: its end left out
        ({"since": "2026-11-10"}, {"since": "2026-11-10", "until": "2026-11-27"}, True),  # or today
        ({"since": "2026-11-10"}, {"since": "2026-11-10", "until": "2026-11-20"}, False),
        ({"since": "2026-11-10", "until": "2026-11-27"}, {"since": "2026-11-10T00:00:00"}, True),
        ({"since": "2026-11-21"}, {"days": 7}, True),  # the last seven days are the same dates
        ({"since": "2026-11-10"}, {}, False),
        ({"until": "2026-10-31"}, {"since": "2026-01-01", "until": "2026-10-31"}, True),
        ({"needed_by": "2026-12-01"}, {"needed_by": "2026-12-01"}, True),
        ({"needed_by": "2026-12-01"}, {"needed_by": "2026-12-01T00:00:00"}, True),
        ({"needed_by": "2026-12-01"}, {}, False),
        ({"needed_by": "2026-12-01"}, {"needed_by": "2026-12-02"}, False),
    ],
)
def test_dates_are_judged_as_the_days_the_call_covers(expected, called, right):
    assert (check_arguments(None, expected, called, TODAY) == "") is right


def test_a_second_call_must_come_later_with_its_arguments():
    also = {"tool": "record_stock_movement", "args": {"movement_type": "outbound"}}
    later = [{"name": "search_materials", "arguments": {"keyword": "x"}}]
    assert "never called" in check_also(None, also, later, TODAY)
    later.append({"name": "record_stock_movement", "arguments": {"movement_type": "inbound"}})
    assert "outbound" in check_also(None, also, later, TODAY)
    later.append({"name": "record_stock_movement", "arguments": {"movement_type": "outbound"}})
    assert check_also(None, also, later, TODAY) == ""


def test_a_write_the_case_does_not_ask_for_fails_it_wherever_it_comes():
    read = {"id": "W1", "tool": "get_material_detail", "args": {"material": "M001"}}
    looked = [{"name": "get_material_detail", "arguments": {"material": "M001"}}]
    assert unasked_write(read, looked) == ""
    booked = looked + [{"name": "record_stock_movement", "arguments": {"quantity": 75}}]
    assert "record_stock_movement" in unasked_write(read, booked)
    filed = looked + [{"name": "create_purchase_request", "arguments": {"quantity": 750}}]
    assert "create_purchase_request" in unasked_write(read, filed)
    two_asks = dict(read, also={"tool": "record_stock_movement", "args": {}})
    assert unasked_write(two_asks, booked) == ""
    assert "create_purchase_request" in unasked_write(two_asks, filed)


def test_earlier_turns_of_the_conversation_are_run_first_and_the_last_judged(app, session):
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    case = {
        "id": "J1",
        "role": "warehouse_staff",
        "context": ["低筋面粉还有多少"],
        "text": "出库5公斤",
        "tool": "record_stock_movement",
        "args": {"material": "M002", "movement_type": "outbound", "quantity": 5},
    }
    assert evaluate(session, [case])[0].ok
    alone = {k: v for k, v in case.items() if k != "context"}  # without the earlier turn: which material?
    assert not evaluate(session, [alone])[0].ok


def test_two_asks_are_judged_on_both_calls(app, session):
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    case = {
        "id": "J2",
        "role": "warehouse_staff",
        "text": "香草精还剩多少？顺便出2瓶给蛋糕线",
        "tool": "search_materials",
        "args": {"keyword_finds": ["M078"]},
        "also": {"tool": "record_stock_movement", "args": {"movement_type": "outbound"}},
    }
    result = evaluate(session, [case])[0]
    assert result.ok, result.why
    case["also"] = {"tool": "record_stock_movement", "args": {"movement_type": "inbound"}}
    assert not evaluate(session, [case])[0].ok
