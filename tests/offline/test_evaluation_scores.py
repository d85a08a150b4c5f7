"""The offline assistant measured on requests it was not tuned on: the held-out test split
(tests/evaluation/test.jsonl; dev.jsonl is for tuning) at least nine times in ten, the blind set written
outside the project at least 85 times in 100; the sets big, bilingual, covering every tool, and not
repeating a request."""

from __future__ import annotations

import pytest

from inventory_ai.assistant.extension import manager
from inventory_ai.services import clock
from tests.support.evaluation import evaluate, load, report


@pytest.mark.slow
def test_the_held_out_test_split_is_understood_at_least_nine_times_in_ten(app, session):
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    cases = sorted(load("test"), key=lambda c: c["tool"] == "create_new_intent")  # teaching last
    results = evaluate(session, cases, today=clock.today())
    accuracy = sum(r.ok for r in results) / len(results)
    assert accuracy >= 0.90, report(results)


@pytest.mark.slow
def test_the_blind_set_written_outside_the_project_is_understood_at_least_85_times_in_100(app, session):
    """Written by someone who had not read the code; only its score is ever looked at."""
    app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
    cases = sorted(load("blind"), key=lambda c: c["tool"] == "create_new_intent")
    results = evaluate(session, cases, today=clock.today())
    accuracy = sum(r.ok for r in results) / len(results)
    assert accuracy >= 0.85, f"{accuracy:.1%}"  # never the misses: they would be read, and tuned on


def test_the_evaluation_sets_are_big_bilingual_and_cover_every_tool(app):
    dev, test = load("dev"), load("test")
    assert len(dev) + len(test) >= 400
    for cases in (dev, test):
        zh = sum(any("\u4e00" <= ch <= "\u9fff" for ch in c["text"]) for c in cases)
        assert zh >= len(cases) / 3 and len(cases) - zh >= len(cases) / 4
        assert {c["tool"] for c in cases} >= set(manager().registry.names()) - {"format_report"}
        assert {c.get("outcome") for c in cases} >= {"clarify", "role_refused", "off_topic", "refused"}


def test_the_split_does_not_repeat_a_request(app):
    assert not {c["text"] for c in load("dev")} & {c["text"] for c in load("test")}
