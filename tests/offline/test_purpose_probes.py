"""What the goods are for beside the material booked or asked about, written as a spec before any
miss was read: a purpose ("做马卡龙用", "给蛋糕线", "for the cheesecake") never outvotes a material
that is named, and never chooses which of a loose name is booked ("黄油做蛋糕用", "cheese for the
cheesecake": the careful call is to ask which); everyday, trade and misspelled names; materials
described by what they are. The cases are in purpose_probes.jsonl beside this file, judged by meaning
like the evaluation sets on the plant's day 2026-11-27. The ones still missed are marked: each is
work left, and a fix that makes one pass must unmark it (strict)."""

from __future__ import annotations

import pytest

from tests.support.probes import cases, judged

# Still missed: a name said beside the description (月饼盒里放的…), a colour word that is another name
# (orange), a clause of what it is for before a named material (做蛋挞用的蛋黄液: kept as a clause).
MISSED = {"PP021", "PP083", "PP090"}


@pytest.mark.parametrize("case", cases(__file__, "purpose_probes.jsonl", MISSED))
def test_what_the_goods_are_for_never_chooses_the_material(app, session, monkeypatch, case):
    result = judged(app, session, monkeypatch, case)
    assert result.ok, f"{case['text']!r}: {result.why}"
