"""Writes that were made on a gesture nobody meant as that decision, kept as cases (write_probes.jsonl
beside this file, each with the turns it follows): a purchase request, filed without confirmation,
filed again by a correction after one ("sorry, 30 bags") or by a follow-up that leans on it
("那低筋面粉呢？"); a price read as the amount (单价调到7块了 → 7 packs); a pack's size added to the count
(20袋，25公斤装的 → 525 kg); a stock figure set by hand (把无盐黄油库存改成0) or a stocktake's difference
(盘点少了2公斤) proposed as the counted level; goods said broken beside the amount booked in whole.
`clarify`: no call, a question asked; `no_write`: no write, whatever else is answered."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.models import ChatMessage, User
from inventory_ai.services import clock
from tests.support.evaluation import _answered
from tests.support.probes import WRITES, cases, judged

MISSED: set[str] = set()  # each failed before the fix that made it pass (the commit before)


@pytest.mark.parametrize("case", cases(__file__, "write_probes.jsonl", MISSED))
def test_a_write_only_when_the_message_is_that_decision(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    written = [c for c in result.calls if c["name"] in WRITES]
    if case.get("outcome") == "no_write":
        assert not written, f"{case['text']!r}: {written}"
        return
    assert result.ok, f"{case['text']!r}: {result.why} {result.calls} {result.reply[:120]!r}"
    if case["tool"] is None:
        assert not written, written


@pytest.mark.parametrize("decided", ["approve", "signoff"])
@pytest.mark.parametrize(
    "text, says",
    [
        ("不好意思，是12箱", "不会再按更正另登一笔"),
        ("sorry, 12 boxes", "will not book"),
        ("不对，是12箱，入冷库", ""),
    ],
)
def test_a_correction_after_a_booking_carried_out_or_waiting_books_nothing_again(
    app, session, monkeypatch, decided, text, says
):
    """A correction of the booking before it is proposed in its place only when that booking was
    declined (the probes above); approved, or waiting for a sign-off, a new proposal would count the
    goods twice if approved too: the answer says so and proposes nothing."""
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    monkeypatch.setattr(clock, "today", lambda: date(2026, 11, 27))
    if decided == "signoff":  # worth more than this, a staff booking waits for a manager's sign-off
        monkeypatch.setattr(manager().signoffs, "signoff_value", Decimal(1))
    user = session.query(User).filter_by(username="staff").one()
    first = _answered(session, user, "入库炼乳10箱", None)
    for _event in manager().resume(
        session, decisions().prepare(session, user, first.message_id, approve=True)
    ):
        pass
    calls = [c for r in session.get(ChatMessage, first.message_id).rounds for c in r.calls]
    assert [c.status for c in calls] == (["success"] if decided == "approve" else ["awaiting_signoff"])
    second = _answered(session, user, text, first.conversation_id)
    message = session.get(ChatMessage, second.message_id)
    assert not [c for r in message.rounds for c in r.calls if c.name in WRITES]
    assert says in message.content
