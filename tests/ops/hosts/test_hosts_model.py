"""The model's circuit breaker lives in the shared Redis, and the daily token budget is counted from
the shared database: what one host learns about the model, or about a user's tokens, the other
acts on, with the same fallback."""

from __future__ import annotations

from inventory_ai.assistant.providers.breaker import FAIL_MAX
from tests.support.dashscope_stub import Error, Reply
from tests.support.hosts import chat


def test_a_breaker_opened_by_one_hosts_failures_sends_the_other_host_to_the_fallback(site, model):
    a, b = site.a, site.b
    staff = site.person(log_in_on=a)
    mark = len(site.stub.requests)
    assert chat(staff, b, "你好").json()["model"] == "qwen-plus"  # the model answers b
    assert len(site.stub.requests) == mark + 1
    try:
        site.stub.then(*[Error(500, "InternalError", "down")] * FAIL_MAX)
        mark = len(site.stub.requests)
        failed_over = chat(staff, a, "你好")  # every attempt fails: the breaker opens, offline answers
        assert failed_over.status_code == 200 and failed_over.json()["model"] == "offline", failed_over.text
        assert len(site.stub.requests) == mark + FAIL_MAX

        for host in (b, a):  # neither host asks the model while the breaker is open
            answered = chat(staff, host, "你好")
            assert answered.status_code == 200 and answered.json()["model"] == "offline", host.name
        assert len(site.stub.requests) == mark + FAIL_MAX
    finally:  # closed again for the tests after this one (the run's own Redis)
        redis = site.redis()
        for key in redis.scan_iter("inventory_ai:dashscope*"):
            redis.delete(key)
        redis.close()
    assert chat(staff, b, "你好").json()["model"] == "qwen-plus"


def test_the_daily_token_budget_used_up_on_one_host_is_used_up_on_the_other(site, model):
    a, b = site.a, site.b
    staff = site.person(log_in_on=a)
    site.stub.then(Reply(content="一个很长的回答。", usage=(site.daily_token_budget, 100)))
    first = chat(staff, a, "详细说说")
    assert (
        first.json()["model"] == "qwen-plus"
        and first.json()["usage"]["input_tokens"] == site.daily_token_budget
    )

    mark = len(site.stub.requests)
    for host in (b, a):  # past the budget: only the offline fallback answers, on either host
        answered = chat(staff, host, "再说说")
        assert answered.status_code == 200 and answered.json()["model"] == "offline", host.name
    assert len(site.stub.requests) == mark
    # The budget is the user's: someone else still gets the model on b.
    other = site.person(log_in_on=b)
    assert chat(other, b, "你好").json()["model"] == "qwen-plus"
