"""What a decision promises holds whatever the caller does next: a stream cut mid-way, a stop that
reaches another process, a failure after a booking, a crash between steps, a race, a split."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal

from sqlalchemy import func, select, update

from inventory_ai.assistant.answering import Answering
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.types import ModelReply, ModelRequest, TextDelta
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Signoff, StockMovement, ToolCallRecord, User, utcnow
from tests.support.clients import approve, client_for, sign_off
from tests.support.scripted import ScriptedProvider, answer, booking, call, calls, use


def chat_bookings() -> list[tuple[str, Decimal]]:
    db.session.commit()
    return [
        (key, quantity)
        for key, quantity in db.session.execute(
            select(StockMovement.idempotency_key, StockMovement.quantity).where(
                StockMovement.idempotency_key.like("chat:%")
            )
        )
    ]


class Slow:
    """A model that talks slowly: `pieces` bits of text, `pause` seconds apart, then its reply."""

    name = "slow"
    model = "slow-1"
    costs_tokens = False

    def __init__(self, pieces: int, pause: float, then: ModelReply | None = None):
        self.pieces, self.pause, self.then = pieces, pause, then
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Iterator:
        self.requests.append(request)
        for _ in range(self.pieces):
            time.sleep(self.pause)
            yield TextDelta("…")
        yield self.then or answer("说完了")


# --- a stream cut mid-way ---------------------------------------------------------------------


def test_an_approval_streamed_to_a_client_that_goes_away_still_books_every_call(app):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5)),
                                    call("record_stock_movement", booking(7, material="M002"))),
                              answer("好了")))  # fmt: skip
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "两笔出库"}).json
    assert body["status"] == "awaiting_confirmation" and len(body["pending"]) == 2
    response = staff.post(
        f"/api/v1/chat/messages/{body['message_id']}/decision",
        json={"decision": "approve"},
        headers={"Accept": "text/event-stream"},
        buffered=False,
    )
    first = next(iter(response.response))  # the `start` event, and then the client goes away
    assert b"start" in first
    response.close()
    assert sorted(abs(q) for _k, q in chat_bookings()) == [Decimal(5), Decimal(7)]
    calls_now = db.session.scalars(select(ToolCallRecord.status)).all()
    assert calls_now == ["success", "success"]


# --- a stop that reaches another process ---------------------------------------------------------


def test_a_stop_asked_through_another_process_reaches_the_running_answer(app, app_with, database_url):
    use(app, Slow(pieces=40, pause=0.25))
    staff = db.session.query(User).filter_by(username="staff").one()
    turn = manager().prepare_message(db.session, staff, "慢慢说", None)
    ended = {}

    def run():
        with app.app_context():
            for _event in manager().run(db.session, turn):
                pass
            ended["status"] = db.session.get(ChatMessage, turn.message_id).status

    runner = threading.Thread(target=run)
    runner.start()
    time.sleep(0.6)
    other = app_with(url=database_url)  # another worker: its cancel sets the flag in the database
    with other.app_context():
        other_user = db.session.query(User).filter_by(username="staff").one()
        decisions().cancel(db.session, other_user, turn.message_id)
    started = time.monotonic()
    runner.join(timeout=15)
    assert ended["status"] == "cancelled"
    assert time.monotonic() - started < 5  # within a few seconds, not the 10 s of 40 pieces


def test_a_stop_left_over_from_before_does_not_cancel_a_later_approval(app):
    model = use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5))), answer("已出库")))
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "出库"}).json
    # A stop that arrived while the round ran, and found the answer waiting already.
    db.session.execute(
        update(ChatMessage).where(ChatMessage.id == body["message_id"]).values(cancel_requested=True)
    )
    db.session.commit()
    decided = approve(staff, body["message_id"]).json
    assert decided["status"] == "completed" and decided["reply"] == "已出库"
    assert len(chat_bookings()) == 1 and len(model.requests) == 2


def test_a_stop_asked_while_a_round_runs_wins_over_waiting_for_confirmation(app):
    def asks_for_a_booking_and_is_stopped_meanwhile(request):
        db.session.execute(
            update(ChatMessage).where(ChatMessage.role == "assistant").values(cancel_requested=True)
        )
        db.session.commit()
        return calls(call("record_stock_movement", booking(5)))

    use(app, ScriptedProvider(asks_for_a_booking_and_is_stopped_meanwhile))
    body = client_for(app, "staff").post("/api/v1/chat", json={"message": "出库"}).json
    assert body["status"] == "cancelled" and body["pending"] == []
    assert body["rounds"][0]["results"][0]["status"] == "declined" and chat_bookings() == []


def test_an_answer_stopped_after_its_booking_says_what_was_booked(app):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5))), answer("好了")))
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "出库"}).json
    use(app, Slow(pieces=40, pause=0.1))
    events = decisions().decide(
        db.session, decisions().prepare(db.session, db.session.query(User).filter_by(username="staff").one(),
                                        body["message_id"], True)
    )  # fmt: skip
    next(events)  # the booking's result: then the reader goes away while the model talks
    next(events)
    events.close()
    view = staff.get(f"/api/v1/chat/messages/{body['message_id']}").json
    # Never `cancelled` while its booking stands: it ended, and its text says it stopped.
    assert view["status"] == "completed" and len(chat_bookings()) == 1
    assert "已停止" in view["reply"] and "已完成" in view["reply"] and "5 kg" in view["reply"]


# --- a failure after a booking -------------------------------------------------------------------


def test_a_booking_made_before_the_answer_failed_is_in_what_the_model_sees_next(app):
    model = use(
        app,
        ScriptedProvider(
            calls(call("record_stock_movement", booking(5))),
            ProviderError("down", code="model_down"),
            answer("上次已经出库了"),
        ),
    )
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "M001 出库 5 kg"}).json
    failed = approve(staff, body["message_id"]).json
    assert failed["status"] == "failed" and len(chat_bookings()) == 1
    staff.post("/api/v1/chat", json={"message": "再试一次", "conversation_id": body["conversation_id"]})
    seen = model.requests[-1].messages
    results = [m for m in seen if m.role == "tool"]
    assert results and json.loads(results[0].content).get("quantity") is not None
    assert any(m.role == "assistant" and "ended failed" in m.content for m in seen)


# --- a crash between steps ---------------------------------------------------------------------


def test_who_decided_what_is_recorded_before_anything_runs(app):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(20))), answer("好")))
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "出库"}).json
    [pending] = body["pending"]
    user = db.session.query(User).filter_by(username="staff").one()
    decisions().prepare(db.session, user, body["message_id"], True, pending["tool_call_id"], {"quantity": 18})
    db.session.expire_all()
    record = db.session.scalar(select(ToolCallRecord))
    assert record.decided_by_id == user.id and json.loads(record.approved_arguments)["quantity"] == 18
    assert "18 kg" in record.description  # what a second person would read is what was approved


def test_a_signoff_asked_for_by_an_answer_that_then_died_is_withdrawn_not_left_waiting(app, monkeypatch):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(1000, movement_type="inbound")))))
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "收货"}).json
    decisions_ = decisions()

    def dies(
        self, signoff_value
    ):  # the process is killed after the sign-off was asked for, before it said so
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(Answering, "wait_for_the_rest", dies)
    user = db.session.query(User).filter_by(username="staff").one()
    with contextlib.suppress(KeyboardInterrupt):
        decisions_.decide(db.session, decisions_.prepare(db.session, user, body["message_id"], True))
    monkeypatch.undo()
    db.session.rollback()
    assert db.session.scalar(select(Signoff.status)) == "waiting"
    db.session.execute(update(ChatMessage).values(heartbeat_at=utcnow() - timedelta(minutes=5)))
    db.session.commit()
    assert client_for(app, "manager").get("/api/v1/approvals").json != []  # not swept yet
    view = staff.get(f"/api/v1/chat/messages/{body['message_id']}").json  # a look ends it
    assert view["status"] == "failed"
    assert db.session.scalar(select(Signoff.status)) == "withdrawn"
    assert client_for(app, "manager").get("/api/v1/approvals").json == []


# --- races --------------------------------------------------------------------------------------


def test_a_signoff_and_its_withdrawal_at_once_exactly_one_decides_and_the_answer_agrees(app):
    outcomes = []
    for _trial in range(4):
        use(app, ScriptedProvider(calls(call("record_stock_movement", booking(1000, movement_type="inbound"))),
                                  answer("好")))  # fmt: skip
        staff = client_for(app, "staff")
        body = staff.post("/api/v1/chat", json={"message": "收货"}).json
        waiting = approve(staff, body["message_id"]).json
        assert waiting["status"] == "awaiting_signoff"
        call_id = waiting["rounds"][0]["tool_calls"][0]["id"]
        manager_client = client_for(app, "manager")
        barrier = threading.Barrier(2)
        codes = {}

        def sign(c=manager_client, call_id=call_id, barrier=barrier, codes=codes):
            barrier.wait()
            codes["sign"] = sign_off(c, call_id).status_code

        def withdraw(c=staff, message_id=body["message_id"], barrier=barrier, codes=codes):
            barrier.wait()
            r = c.post(f"/api/v1/chat/messages/{message_id}/cancel")
            codes["withdraw"] = (r.status_code, r.json.get("status"))

        threads = [threading.Thread(target=sign), threading.Thread(target=withdraw)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        db.session.expire_all()  # this thread's session kept the answer as it was before the race
        view = staff.get(f"/api/v1/chat/messages/{body['message_id']}").json
        withdrawn = codes["withdraw"] == (200, "cancelled")  # it came first: the sign-off is void
        assert codes["sign"] == (409 if withdrawn else 200), codes
        if not withdrawn:  # the sign-off came first: the withdrawal lost, and the booking stands
            assert codes["withdraw"][0] in (200, 409) and view["status"] == "completed", codes
        outcomes.append(not withdrawn)
    booked = chat_bookings()
    assert len(booked) == sum(outcomes)


# --- four eyes on the whole --------------------------------------------------------------------


def test_a_large_booking_split_in_two_calls_still_needs_a_signoff(app):
    # 500 kg of bread flour is worth 3,100 CNY: under the 5,000 threshold alone, over it together.
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(500, movement_type="inbound")),
                                    call("record_stock_movement", booking(500, movement_type="inbound"))),
                              answer("好")))  # fmt: skip
    staff = client_for(app, "staff")
    body = staff.post("/api/v1/chat", json={"message": "收货两批"}).json
    decided = approve(staff, body["message_id"]).json
    assert decided["status"] == "awaiting_signoff" and chat_bookings() == []
    assert db.session.scalar(select(func.count()).select_from(Signoff)) == 2


def test_a_model_that_keeps_talking_is_cut_off_at_the_answers_deadline(app):
    use(app, Slow(pieces=100, pause=0.1))
    manager().answer_deadline_seconds = 2
    staff = db.session.query(User).filter_by(username="staff").one()
    started = time.monotonic()
    turn = manager().prepare_message(db.session, staff, "说个没完", None)
    for _event in manager().run(db.session, turn):
        pass
    message = db.session.get(ChatMessage, turn.message_id)
    assert message.status == "failed" and message.error_code == "deadline"
    assert time.monotonic() - started < 5  # not the 10 s the model would have talked


def test_an_edited_approval_racing_a_rejection_loses_with_409_never_another_error(app):
    for _trial in range(4):
        use(app, ScriptedProvider(calls(call("record_stock_movement", booking(20))), answer("好")))
        staff = client_for(app, "staff")
        body = staff.post("/api/v1/chat", json={"message": "出库"}).json
        [pending] = body["pending"]
        url = f"/api/v1/chat/messages/{body['message_id']}/decision"
        barrier = threading.Barrier(2)
        codes = []

        def decide(payload, url=url, barrier=barrier, codes=codes):
            client = client_for(app, "staff")
            barrier.wait()
            codes.append(client.post(url, json=payload).status_code)

        edit = {"decision": "approve", "tool_call_id": pending["tool_call_id"], "arguments": {"quantity": 18}}
        threads = [threading.Thread(target=decide, args=(p,)) for p in (edit, {"decision": "reject"})]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200, 409]


def test_another_writer_between_the_stop_check_and_the_pause_does_not_fail_the_answer(app, database_url):
    """SQLite (WAL): a transaction that read cannot write once another connection committed. The
    crash benchmark found the pause for confirmation reading first (the stop check) and failing
    under load; the check and the pause are one write now."""
    from inventory_ai.database import write_transaction
    from inventory_ai.services import audit

    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5))), answer("好")))
    real = type(manager())._cancel_requested
    engine = db.engine

    def checked_while_another_writes(self, session, message):
        stopped = real(self, session, message)

        def other_writer():
            with write_transaction(engine) as other:
                audit.record(other, "elsewhere", "ok")

        writer = threading.Thread(target=other_writer)
        writer.start()
        writer.join(timeout=0.5)  # before the fix it commits here; after it, it waits for our write
        return stopped

    type(manager())._cancel_requested = checked_while_another_writes
    try:
        body = client_for(app, "staff").post("/api/v1/chat", json={"message": "出库"}).json
    finally:
        type(manager())._cancel_requested = real
    assert body["status"] == "awaiting_confirmation", body.get("reply")
