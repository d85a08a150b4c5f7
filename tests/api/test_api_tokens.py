"""API tokens: shown once, revocable, last use kept to the minute; a user's role change or deactivation
applies to their tokens at once, an admin's reset or a deactivation revokes them for good, and your own
password change keeps yours."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import event, select

from inventory_ai.auth import authenticated_user, forget_tokens
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken, User, utcnow
from tests.support.clients import bearer
from tests.support.databases import PASSWORD


def test_api_tokens_are_shown_once_and_revocable(client, auth, session):
    auth.login("staff")
    issued = client.post("/api/v1/auth/tokens", json={"name": "label printer"}).json
    assert issued["token"].startswith("iai_") and issued["prefix"] == issued["token"][:12]
    listed = client.get("/api/v1/auth/tokens").json
    assert "token" not in listed[0] and listed[0]["name"] == "label printer"
    headers = {"Authorization": f"Bearer {issued['token']}"}
    assert client.get("/api/v1/conversations", headers=headers).status_code == 200
    assert client.get("/api/v1/auth/tokens").json[0]["last_used_at"] is not None
    assert client.delete(f"/api/v1/auth/tokens/{issued['id']}").status_code == 204
    auth.logout()
    assert client.get("/api/v1/conversations", headers=headers).status_code == 401


def test_token_last_used_is_kept_to_the_minute(client, auth, session):
    """A script polling every second must not cost a database write every second."""
    auth.login("staff")
    issued = client.post("/api/v1/auth/tokens", json={"name": "poller"}).json
    headers = {"Authorization": f"Bearer {issued['token']}"}
    token = session.get(ApiToken, issued["id"])
    writes = []
    listen = lambda *args: writes.append(args[2])  # noqa: E731
    event.listen(db.engine, "before_cursor_execute", listen)
    try:
        for _ in range(5):
            assert client.get("/api/v1/conversations", headers=headers).status_code == 200
    finally:
        event.remove(db.engine, "before_cursor_execute", listen)
    assert sum(s.lstrip().upper().startswith("UPDATE API_TOKENS") for s in writes) == 1
    session.refresh(token)
    token.last_used_at -= timedelta(minutes=2)  # a minute later, the next use is stamped again
    session.commit()
    forget_tokens()  # by then the token was read again (auth.TOKEN_CHECK_SECONDS)
    assert client.get("/api/v1/conversations", headers=headers).status_code == 200
    session.refresh(token)
    assert utcnow() - token.last_used_at < timedelta(seconds=5)


def test_a_role_change_or_deactivation_applies_to_the_users_tokens_at_once(client, admin, token, session):
    """Tokens found good are kept for a few seconds (auth.TOKEN_CHECK_SECONDS); an admin's change
    of role or a deactivation is not kept waiting by that."""
    staff = token("staff")
    assert client.get("/api/v1/admin/users", headers=staff).status_code == 403
    uid = session.scalar(select(User.id).where(User.username == "staff"))
    client.patch(f"/api/v1/admin/users/{uid}", json={"role": "admin"}, headers=admin)
    assert client.get("/api/v1/admin/users", headers=staff).status_code == 200
    client.patch(f"/api/v1/admin/users/{uid}", json={"active": False}, headers=admin)
    assert client.get("/api/v1/conversations", headers=staff).status_code == 401


def _token(app, username: str, password: str = PASSWORD) -> str:
    c = app.test_client()
    login = c.post("/api/v1/auth/login", json={"username": username, "password": password})
    c.environ_base["HTTP_X_CSRFTOKEN"] = login.json["csrf_token"]
    return c.post("/api/v1/auth/tokens", json={"name": "script"}).json["token"]


def _works(app, token: str) -> bool:
    return (
        app.test_client().get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )


def test_an_admin_reset_revokes_the_users_tokens(app, client, auth, user):
    token = _token(app, "staff")
    assert _works(app, token)
    auth.login("admin")
    reset = client.post(
        f"/api/v1/admin/users/{user('staff').id}/password", json={"password": "reset-password-1"}
    )
    assert reset.status_code == 204
    assert not _works(app, token)
    assert (
        db.session.query(ApiToken)
        .filter(ApiToken.revoked_at.is_(None))
        .filter_by(user_id=user("staff").id)
        .count()
        == 0
    )


def test_a_deactivation_revokes_the_users_tokens_for_good(app, client, auth, user):
    token = _token(app, "staff")
    auth.login("admin")
    staff_id = user("staff").id
    assert client.patch(f"/api/v1/admin/users/{staff_id}", json={"active": False}).status_code == 200
    assert not _works(app, token)
    assert client.patch(f"/api/v1/admin/users/{staff_id}", json={"active": True}).status_code == 200
    assert not _works(app, token)  # reactivated: the user is back, the old token is not
    assert _works(app, _token(app, "staff"))  # a new one works


def test_your_own_password_change_keeps_your_tokens(app, client, auth):
    token = _token(app, "staff")
    auth.login("staff")
    changed = client.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "a-new-password-1"}
    )
    assert changed.status_code == 204
    assert _works(app, token)


def test_the_caller_is_the_user_itself_not_flask_logins_proxy(app, session):
    """Views and the loop read the caller's attributes many times: through `current_user` each read
    was looked up again (werkzeug's proxy, flask-login's g)."""
    headers = bearer(session, "staff")
    with app.test_request_context("/api/v1/conversations", headers=headers):
        caller = authenticated_user()
        assert type(caller) is User and caller.username == "staff"
    with app.app_context(), app.test_request_context("/api/v1/conversations"):  # a g of its own
        assert authenticated_user() is None
