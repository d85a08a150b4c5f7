"""The offline assistant asked about a warehouse outside the user's (issue 34): it says where they
work and whom to ask, never that warehouse's figures."""

from __future__ import annotations

import re

import pytest

from tests.support.clients import AuthActions


@pytest.mark.parametrize(
    ("text", "says", "whom"),
    [
        ("主仓库的库存总值是多少", "您负责冷库", "请询问主仓库的同事"),
        (
            "what is the stock in the main warehouse worth?",
            "You work in Cold Store",
            "ask someone at Main Warehouse",
        ),
        ("主仓库最近7天的出入库记录", "您负责冷库", "请询问主仓库的同事"),
    ],
)
def test_a_question_about_another_warehouse_is_pointed_there(app, text, says, whom):
    client = app.test_client()
    AuthActions(client).login("coldstore")
    answer = client.post("/api/v1/chat", json={"message": text}).json
    assert answer["model"] == "offline"
    assert says in answer["reply"] and whom in answer["reply"], answer["reply"]
    figures = re.sub(r"WH\d\d|7天", "", answer["reply"])  # the code and the period asked are no figures
    assert not re.search(r"\d", figures), answer["reply"]
    for result in (r for rnd in answer["rounds"] for r in rnd["results"]):
        assert result["status"] == "error" and "PermissionDenied" in result["content"]


@pytest.mark.parametrize(
    ("user", "text", "warehouse"),
    [
        ("coldstore", "脱脂奶粉出库5公斤", "WH02"),  # most of it is in the main warehouse, not theirs
        ("staff", "脱脂奶粉出库5公斤", "WH01"),  # unscoped: where most of it is
        ("packaging", "高筋面粉入库2袋", "WH03"),  # none of it in theirs yet: theirs, not main
    ],
)
def test_a_booking_that_names_no_warehouse_is_proposed_in_the_users_own(app, user, text, warehouse):
    client = app.test_client()
    AuthActions(client).login(user)
    answer = client.post("/api/v1/chat", json={"message": text}).json
    [pending] = answer["pending"]
    assert pending["arguments"]["warehouse"] == warehouse, answer
