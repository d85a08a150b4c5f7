"""A thread holds one database connection at a time. A tool runs in a session of its own (its own
connection, committed on its own); the request that runs it must have let go of its connection
first. Otherwise a worker whose threads all run tools at once waits on its own pool: each thread
holds a connection and waits for a second one, none comes back, and after the pool's timeout every
one of those tools fails. (Found by tests/ops/hosts: ten approvals at once on one worker with a pool
of 4 + 4 connections failed their bookings after 10 s.)"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from inventory_ai.assistant.extension import manager as answers
from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.clients import approve, client_for, sign_off
from tests.support.scripted import ScriptedProvider, answer, booking, books, call, calls, use


@contextmanager
def most_held_by_a_thread(engine) -> Iterator[Counter]:
    """Per thread, the most connections it held from `engine`'s pool at once."""
    held, most = Counter(), Counter()
    lock = threading.Lock()

    def taken(_dbapi, _record, _proxy):
        with lock:
            me = threading.get_ident()
            held[me] += 1
            most[me] = max(most[me], held[me])

    def given_back(_dbapi, _record):
        with lock:
            held[threading.get_ident()] -= 1

    db.session.commit()  # the test's own session holds none
    event.listen(engine, "checkout", taken)
    event.listen(engine, "checkin", given_back)
    try:
        yield most
    finally:
        event.remove(engine, "checkout", taken)
        event.remove(engine, "checkin", given_back)


def test_a_booking_is_proposed_and_approved_while_its_request_holds_no_other_connection(app):
    use(app, books(booking(20)))
    staff = client_for(app, "staff")
    with most_held_by_a_thread(db.engine) as most:  # the proposal is described in a session of its own
        asked = staff.post("/api/v1/chat", json={"message": "出库 20 公斤"}).json
    assert asked["status"] == "awaiting_confirmation"
    assert max(most.values()) == 1, dict(most)
    with most_held_by_a_thread(db.engine) as most:
        decided = approve(staff, asked["message_id"])
    assert decided.json["rounds"][0]["results"][0]["status"] == "success"
    assert max(most.values()) == 1, dict(most)


def test_a_signoff_books_while_its_request_holds_no_other_connection(app):
    use(app, books(booking(1000, "inbound")))  # CNY 6,200: waits for a manager
    staff = client_for(app, "staff")
    asked = staff.post("/api/v1/chat", json={"message": "收货 1000 公斤"}).json
    waiting = approve(staff, asked["message_id"]).json
    call_id = waiting["rounds"][0]["tool_calls"][0]["id"]
    manager = client_for(app, "manager")
    with most_held_by_a_thread(db.engine) as most:
        signed = sign_off(manager, call_id)
    assert signed.json["result"]["status"] == "success"
    assert max(most.values()) == 1, dict(most)


def test_a_chat_round_runs_its_tools_while_the_answer_holds_no_other_connection(app):
    request = {"material": "M001", "quantity": 100, "note": "补货"}
    use(app, ScriptedProvider(
        calls(call("create_purchase_request", request, "c1"), call("search_materials", {"keyword": "面粉"}, "c2")),
        answer("好了"),
    ))  # fmt: skip
    manager = client_for(app, "manager")
    with most_held_by_a_thread(db.engine) as most:
        asked = manager.post("/api/v1/chat", json={"message": "面粉补货 100 公斤"}).json
    assert [r["status"] for r in asked["rounds"][0]["results"]] == ["success", "success"]
    assert max(most.values()) == 1, dict(most)


def test_a_tool_called_from_mcp_runs_while_its_caller_holds_no_other_connection(app):
    staff = db.session.query(User).filter_by(username="manager").one()
    with most_held_by_a_thread(db.engine) as most:
        made = answers().call_directly(
            db.session, staff, "create_purchase_request", {"material": "M001", "quantity": 5}
        )
    assert made.status == "success"
    assert max(most.values()) == 1, dict(most)
