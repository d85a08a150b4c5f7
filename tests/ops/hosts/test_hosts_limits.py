"""Limits are counted in the shared Redis: attempts spread over both hosts fill one count, so no
host alone ever reaches the limit that refuses them on both."""

from __future__ import annotations

from inventory_ai.extensions import LOGIN_LIMIT
from tests.support.hosts import chat

FAILED_LOGINS = int(LOGIN_LIMIT.split()[0])  # per address and username


def test_failed_logins_spread_over_both_hosts_lock_the_name_on_both(site):
    a, b = site.a, site.b
    person = site.person()
    for attempt in range(FAILED_LOGINS):  # a, b, a, b, a: neither host has seen the limit
        refused = person.login((a, b)[attempt % 2], password=f"wrong-password-{attempt}")
        assert refused.status_code == 401, refused.text
    for host in (a, b):  # the right password now: the name is locked on both
        locked = person.login(host)
        assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0, host.name
    # Another name from the same address is not (the count is per address and name).
    other = site.person()
    other.address = person.address
    assert other.login(b).status_code == 200


def test_chat_messages_spread_over_both_hosts_reach_the_limit_on_both(site, model):
    a, b = site.a, site.b
    staff = site.person(log_in_on=a)
    for n in range(site.chat_limit):  # a, b, a, b, …: half the limit on each host
        answered = chat(staff, (a, b)[n % 2], f"第 {n} 个问题")
        assert answered.status_code == 200, answered.text
        assert int(answered.headers["X-RateLimit-Remaining"]) == site.chat_limit - n - 1
    for host in (a, b):
        refused = chat(staff, host, "再来一个")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0, host.name
    # The limit is the user's: someone else still asks on either host.
    other = site.person(log_in_on=b)
    assert chat(other, a, "你好").status_code == 200
