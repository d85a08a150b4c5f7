"""Writes that were made on a gesture nobody meant as that decision, kept as cases (write_probes.jsonl
beside this file, each with the turns it follows): a purchase request, filed without confirmation,
filed again by a correction after one ("sorry, 30 bags") or by a follow-up that leans on it
("那低筋面粉呢？"); a price read as the amount (单价调到7块了 → 7 packs); a pack's size added to the count
(20袋，25公斤装的 → 525 kg); a stock figure set by hand (把无盐黄油库存改成0) or a stocktake's difference
(盘点少了2公斤) proposed as the counted level; goods said broken beside the amount booked in whole.
`clarify`: no call, a question asked; `no_write`: no write, whatever else is answered."""

from __future__ import annotations

import pytest

from tests.support.probes import WRITES, cases, judged

# Written and run before the fixes: every case below was a wrong write or a wrong reading then.
MISSED = {f"WS{n:02d}" for n in (1, 6, 7, 12, 15, 19, 20, 21, 22, 24, 25, 26, 27, 30, 31, 36, 37, 38, 39, 40, 41, 42, 43,
                                  44, 45, 47, 52, 53, 54, 55, 56, 58, 60, 63, 65, 71, 73, 74, 75, 76, 78, 81, 83, 84, 85, 86)}  # fmt: skip


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
