"""What a description may choose and what makes a transfer, through the real loop on the plant's day
2026-11-27. A description only chooses among what the loose name said finds, and a write needs a clear
winner among them (else the assistant asks with the candidates); 调了 also means adjusted; two stores
joined by 和/and are two places, a route between them (到, 往…调, "from … to …") is a transfer."""

from __future__ import annotations

from datetime import date

import pytest

from inventory_ai.models import ChatMessage, User
from inventory_ai.services import clock
from tests.support.evaluation import _answered, _arguments

WRITES = {"record_stock_movement", "create_purchase_request"}


def _calls(session, role: str, text: str) -> tuple[list[tuple[str, dict]], str]:
    user = session.query(User).filter_by(username={"warehouse_staff": "staff"}.get(role, "manager")).one()
    turn = _answered(session, user, text, None)
    message = session.get(ChatMessage, turn.message_id)
    return [(c.name, _arguments(c.arguments)) for r in message.rounds for c in r.calls], message.content or ""


@pytest.fixture
def plant_day(app, monkeypatch):
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    monkeypatch.setattr(clock, "today", lambda: date(2026, 11, 27))


@pytest.mark.parametrize(
    "text",
    [
        "book out 3 kg chocolate for the brownies",  # the walnuts' description says brownies: not a chocolate
        "book out 2 kg chocolate for the brownie order",
        "book out 1 kg chocolate for decorating",  # two chocolates are described so: a near tie
    ],
)
def test_a_description_books_nothing_unless_it_clearly_picks_one_of_the_names_materials(
    session, plant_day, text
):
    calls, reply = _calls(session, "warehouse_staff", text)
    assert not [c for c in calls if c[0] in WRITES], calls
    assert "?" in reply or "？" in reply


def test_what_the_goods_are_for_never_chooses_which_of_a_loose_name_is_booked(session, plant_day):
    # Only cream cheese is described as for cheesecake, yet "cheese" names three: the purpose says
    # what the goods are for, not which cheese the person means, so the assistant asks.
    calls, reply = _calls(session, "warehouse_staff", "book out 4 kg cheese for the cheesecake")
    assert not [c for c in calls if c[0] in WRITES], calls
    assert "?" in reply or "？" in reply


@pytest.mark.parametrize(
    "text, material, quantity",
    [("无盐黄油我调了一下，实际480公斤", "M027", 480), ("高筋面粉我调了一下，盘点实际是95公斤", "M001", 95)],
)
def test_adjusted_to_a_count_is_an_adjustment_not_a_transfer(session, plant_day, text, material, quantity):
    calls, _ = _calls(session, "warehouse_manager", text)
    assert len(calls) == 1 and calls[0][0] == "record_stock_movement", calls
    args = calls[0][1]
    assert (args["movement_type"], args["material"], float(args["quantity"])) == (
        "adjustment",
        material,
        quantity,
    )


@pytest.mark.parametrize(
    "text",
    [
        "冷库和主仓上周的流水",
        "主仓和冷库今天的出入库记录",
        "show me this week's movements in the main warehouse and the cold store",
        "冷库温度调了吗",
    ],
)
def test_two_stores_side_by_side_are_not_a_transfer(session, plant_day, text):
    calls, _ = _calls(session, "warehouse_staff", text)
    assert all(a.get("movement_type") != "transfer" for _, a in calls), calls


@pytest.mark.parametrize(
    "text",
    [
        "上周冷库往主仓调了哪些货",
        "从冷库到主仓的流水",
        "movements from the cold store to the main warehouse last week",
    ],
)
def test_a_route_between_two_stores_is_a_transfer(session, plant_day, text):
    calls, _ = _calls(session, "warehouse_manager", text)
    assert calls and calls[0][0] == "get_stock_movements", calls
    assert calls[0][1].get("movement_type") == "transfer", calls
