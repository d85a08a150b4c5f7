"""What the probe files of tests/offline share: their cases as test parameters (a .jsonl beside the
test, or a list written in it), the ones still missed marked strict (a fix that makes one pass must
unmark it), the proposal a case expects, and the judge's verdict on the plant's day, 2026-11-27."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from inventory_ai.services import clock
from tests.support.evaluation import Result, evaluate, load

WRITES = {"record_stock_movement", "create_purchase_request", "create_new_intent"}
STAFF, BUYER, MANAGER = "warehouse_staff", "purchaser", "warehouse_manager"


def cases(test_file: str, name: str, missed: set[str]) -> list:
    """The cases of `name` (a .jsonl beside `test_file`), each with its id; a missed one strict xfail."""
    strict = [pytest.mark.xfail(strict=True)]
    found = load(str(Path(test_file).with_name(name)))
    return [pytest.param(c, id=c["id"], marks=strict * (c["id"] in missed)) for c in found]


def judged(app, session, monkeypatch, case: dict) -> Result:
    """The judge's verdict on one case through the real loop, on the plant's day."""
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    monkeypatch.setattr(clock, "today", lambda: date(2026, 11, 27))
    return evaluate(session, [case])[0]


def answered_as_asked(app, session, monkeypatch, case: dict) -> Result:
    """The judge's verdict, which must be right; a case that expects only a read (no `also`) gets no
    write at all."""
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
    if case["tool"] not in WRITES and "also" not in case:  # a read is never a write
        assert not {c["name"] for c in result.calls} & WRITES
    return result


def booked(code: str, kind: str, quantity) -> dict:
    """The booking a case expects proposed."""
    return {
        "tool": "record_stock_movement",
        "args": {"material": code, "movement_type": kind, "quantity": quantity},
    }


def asked(result: Result) -> bool:
    """No write proposed, and a question asked back."""
    return not {c["name"] for c in result.calls} & WRITES and any(m in result.reply for m in "?？")
