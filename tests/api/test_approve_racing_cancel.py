"""Approve racing cancel on the same waiting booking, started together by a barrier, many rounds: of
the two exactly one decides; an answer whose booking stands is never reported `cancelled` (not in
the approval's response, not in the cancel's, not when looked at later); a cancel that loses says
so (409), and a cancel that wins leaves nothing booked. Runs on the suite's database (SQLite, or
PostgreSQL when INVENTORY_AI_TEST_DATABASE_URL names one)."""

from __future__ import annotations

import random
import threading
import time

from sqlalchemy import select

from inventory_ai.assistant.types import ModelRequest, TextDelta
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import StockMovement
from tests.support.clients import AuthActions
from tests.support.scripted import answer, booking, call, calls, use

ROUNDS = 200


class BooksThenAnswers:
    """A model for any number of rounds: a question gets one booking call, a tool result a reply
    that takes a moment to write (as a model's does: a stop may come meanwhile)."""

    name = "scripted"
    model = "scripted-1"
    costs_tokens = False

    def stream(self, request: ModelRequest):
        if request.messages[-1].role == "user":
            yield calls(call("record_stock_movement", booking(1, movement_type="inbound")))
        else:
            yield TextDelta("好")
            time.sleep(0.01)
            yield answer("好了")


def booked_keys() -> set[str]:
    db.session.commit()
    return set(db.session.scalars(select(StockMovement.idempotency_key)))


def race(staff, deciding, message_id: str, lags: tuple[float, float]) -> dict:
    """Approve and cancel at once, each after its lag: spread over the rounds, the cancel lands
    before the approval, while it books, while the model answers, or after the end."""
    barrier, results = threading.Barrier(2), {}

    def approve():
        barrier.wait()
        time.sleep(lags[0])
        r = deciding.post(f"/api/v1/chat/messages/{message_id}/decision", json={"decision": "approve"})
        results["approve"] = (r.status_code, (r.json or {}).get("status"))

    def cancel():
        barrier.wait()
        time.sleep(lags[1])
        r = staff.post(f"/api/v1/chat/messages/{message_id}/cancel")
        results["cancel"] = (r.status_code, (r.json or {}).get("status"))

    threads = [threading.Thread(target=approve), threading.Thread(target=cancel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check(results: dict, booked: bool, seen: str) -> None:
    approve, cancel = results["approve"], results["cancel"]
    if booked:
        assert approve[0] == 200 and approve[1] != "cancelled", results
        assert seen != "cancelled", (results, seen)
        assert cancel[1] != "cancelled", results
        assert cancel[0] in (200, 409), results
        if cancel[0] == 200:  # it came after the booking: it stopped only what followed
            assert cancel[1] in ("running", "completed"), results
    else:
        assert cancel == (200, "cancelled") and seen == "cancelled", (results, seen)
        assert approve[0] == 409, results


def test_an_answer_that_booked_is_never_reported_cancelled_and_a_losing_cancel_says_so(app_with):
    config = config_for_tests("")
    config.chat_rate_limit = "100000 per minute"
    app = app_with(config)
    use(app, BooksThenAnswers())
    staff, deciding = app.test_client(), app.test_client()
    AuthActions(staff).login("staff")
    AuthActions(deciding).login("staff")  # the same person, in another tab
    wins, lag = {"approve": 0, "cancel": 0}, random.Random(32)
    with app.app_context():
        for round_ in range(ROUNDS):
            body = staff.post("/api/v1/chat", json={"message": "出库 1 kg"}).json
            assert body["status"] == "awaiting_confirmation", body
            [pending] = body["pending"]
            lags = (0.0, lag.uniform(0, 0.05)) if round_ % 2 else (lag.uniform(0, 0.01), 0.0)
            results = race(staff, deciding, body["message_id"], lags)
            booked = f"chat:{pending['tool_call_id']}" in booked_keys()
            seen = staff.get(f"/api/v1/chat/messages/{body['message_id']}").json["status"]
            check(results, booked, seen)
            wins["approve" if booked else "cancel"] += 1
    assert wins["approve"] and wins["cancel"], wins  # the race went both ways
