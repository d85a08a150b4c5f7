"""Sessions end for real: a copy of the cookie taken before logout, a password change, a reset or a
deactivation no longer works."""

from __future__ import annotations

import re

from tests.support.clients import client_for
from tests.support.databases import PASSWORD


def copy_of(app, client):
    """Another client holding the same cookie (what a thief would copy)."""
    thief = app.test_client()
    cookie = client.get_cookie("session")
    thief.set_cookie(cookie.key, cookie.value)
    return thief


def test_logout_ends_the_session_and_a_copy_of_its_cookie(app):
    client = client_for(app)
    thief = copy_of(app, client)
    assert thief.get("/api/v1/auth/me").status_code == 200
    assert client.post("/api/v1/auth/logout").status_code == 204
    assert client.get("/api/v1/auth/me").status_code == 401
    assert thief.get("/api/v1/auth/me").status_code == 401
    assert thief.get("/").status_code == 302  # pages send it to the login page


def test_web_logout_ends_it_too(app):
    client = client_for(app)
    thief = copy_of(app, client)
    page = client.get("/").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    assert thief.get("/api/v1/auth/me").status_code == 401


def test_a_password_change_ends_every_other_session(app):
    phone, laptop = client_for(app), client_for(app)
    changed = laptop.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "a-new-password-1"}
    )
    assert changed.status_code == 204
    assert phone.get("/api/v1/auth/me").status_code == 401
    assert laptop.get("/api/v1/auth/me").status_code == 200  # the one that changed it goes on
    wrong = laptop.post("/api/v1/auth/password", json={"current_password": "nope", "new_password": "x" * 10})
    assert wrong.status_code == 401


def test_an_admins_reset_and_a_deactivation_end_every_session_of_that_user(app, user):
    staff, admin = client_for(app), client_for(app, "admin")
    staff_id = user("staff").id
    assert (
        admin.post(
            f"/api/v1/admin/users/{staff_id}/password", json={"password": "reset-by-admin"}
        ).status_code
        == 204
    )
    assert staff.get("/api/v1/auth/me").status_code == 401
    manager = client_for(app, "manager")
    manager_id = user("manager").id
    assert admin.patch(f"/api/v1/admin/users/{manager_id}", json={"active": False}).status_code == 200
    assert manager.get("/api/v1/auth/me").status_code == 401
