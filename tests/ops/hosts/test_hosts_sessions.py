"""Sessions and bearer tokens across hosts: a login made on one host is a login on the other, and
ending it on either ends it on both; a token revoked on one host is refused by the other within the
time a host trusts a token it checked (auth.TOKEN_CHECK_SECONDS, docs/operations.md)."""

from __future__ import annotations

import time

from inventory_ai.auth import TOKEN_CHECK_SECONDS

# A token read just before the revocation committed is trusted from the end of that read: the
# documented time, plus the read's own length, a fraction of a second.
TOKEN_TRUSTED_AT_MOST = TOKEN_CHECK_SECONDS + 0.5


def test_a_login_made_on_one_host_works_on_the_other_and_a_logout_on_either_ends_it_on_both(site):
    a, b = site.a, site.b
    person = site.person(log_in_on=a)
    me = person.get(b, "/api/v1/auth/me")
    assert me.status_code == 200 and me.json()["username"] == person.username
    # A write on b with the token a gave: the CSRF token belongs to the session, not to a host.
    issued = person.post(b, "/api/v1/auth/tokens", json={"name": "made on b", "valid_days": 1})
    assert issued.status_code == 201, issued.text

    copy = person.cookie  # a copy of the cookie, as a stolen one would be
    assert person.post(b, "/api/v1/auth/logout").status_code == 204
    person.cookie = copy
    for host in (a, b):
        assert person.get(host, "/api/v1/auth/me").status_code == 401, host.name

    # And the other way round: logged in on b, out on a.
    assert person.login(b).status_code == 200
    assert person.get(a, "/api/v1/auth/me").status_code == 200
    copy = person.cookie
    assert person.post(a, "/api/v1/auth/logout").status_code == 204
    person.cookie = copy
    for host in (a, b):
        assert person.get(host, "/api/v1/auth/me").status_code == 401, host.name


def test_an_admins_password_reset_on_one_host_ends_the_users_sessions_on_both(site):
    a, b = site.a, site.b
    person = site.person(log_in_on=b)
    assert person.get(a, "/api/v1/auth/me").status_code == 200
    reset = site.admin.post(
        a, f"/api/v1/admin/users/{person.id}/password", json={"password": "a-new-secret-1"}
    )
    assert reset.status_code == 204, reset.text
    for host in (a, b):
        assert person.get(host, "/api/v1/auth/me").status_code == 401, host.name


def test_a_bearer_token_works_on_both_hosts_and_its_revocation_on_one_reaches_the_other(site):
    a, b = site.a, site.b
    person = site.person(log_in_on=a)
    token_id, script = site.token_for(person, a)
    for host in (a, b):  # each host has now checked it, and trusts it for a while
        me = script.get(host, "/api/v1/auth/me")
        assert me.status_code == 200 and me.json()["username"] == person.username, host.name

    revoked = person.request("DELETE", a, f"/api/v1/auth/tokens/{token_id}")
    assert revoked.status_code == 204, revoked.text
    revoked_at = time.monotonic()
    # On the host that revoked it, at once (every worker: the instance folder's change marker).
    for _ in range(4):
        assert script.get(a, "/api/v1/auth/me").status_code == 401
    # On the other host, by the time a host trusts a checked token has passed.
    time.sleep(max(0.0, revoked_at + TOKEN_TRUSTED_AT_MOST - time.monotonic()))
    for _ in range(4):  # whichever of b's workers answers
        assert script.get(b, "/api/v1/auth/me").status_code == 401


def test_a_deactivation_on_one_host_ends_sessions_and_tokens_on_the_other(site):
    a, b = site.a, site.b
    person = site.person(log_in_on=b)
    _, script = site.token_for(person, b)
    assert script.get(b, "/api/v1/auth/me").status_code == 200
    deactivated = site.admin.request("PATCH", a, f"/api/v1/admin/users/{person.id}", json={"active": False})
    assert deactivated.status_code == 200, deactivated.text
    changed_at = time.monotonic()
    assert person.get(b, "/api/v1/auth/me").status_code == 401  # sessions: read with every request
    time.sleep(max(0.0, changed_at + TOKEN_TRUSTED_AT_MOST - time.monotonic()))
    for _ in range(4):
        assert script.get(b, "/api/v1/auth/me").status_code == 401
