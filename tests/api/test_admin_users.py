"""Users through the admin API: create, change a role, deactivate, reset a password; every field checked;
no admin locks themselves out."""

from __future__ import annotations


def test_users_create_change_role_deactivate_and_reset_password(client, admin):
    created = client.post(
        "/api/v1/admin/users",
        json={"username": "lihua", "password": "secret-pass-1", "role": "warehouse_staff"},
        headers=admin,
    )
    assert (
        created.status_code == 201 and "password" not in created.json and "password_hash" not in created.text
    )
    uid = created.json["id"]
    assert (
        client.post(
            "/api/v1/admin/users",
            json={"username": "lihua", "password": "secret-pass-1", "role": "admin"},
            headers=admin,
        ).status_code
        == 409
    )
    assert (
        client.patch(f"/api/v1/admin/users/{uid}", json={"role": "warehouse_manager"}, headers=admin).json[
            "role"
        ]
        == "warehouse_manager"
    )
    assert (
        client.post(
            f"/api/v1/admin/users/{uid}/password", json={"password": "new-secret-2"}, headers=admin
        ).status_code
        == 204
    )
    login = client.post("/api/v1/auth/login", json={"username": "lihua", "password": "new-secret-2"})
    assert login.status_code == 200 and login.json["role"] == "warehouse_manager"
    assert (
        client.patch(f"/api/v1/admin/users/{uid}", json={"active": False}, headers=admin).json["active"]
        is False
    )
    assert (
        client.post("/api/v1/auth/login", json={"username": "lihua", "password": "new-secret-2"}).status_code
        == 401
    )


def test_user_validation_lists_every_field(client, admin):
    response = client.post(
        "/api/v1/admin/users",
        json={"username": "x", "password": "short", "role": "boss", "extra": 1},
        headers=admin,
    )
    assert response.status_code == 422
    details = response.json["error"]["details"]["json"]
    assert {"username", "password", "role", "extra"} <= set(details)


def test_admins_cannot_lock_themselves_out(client, admin, user):
    response = client.patch(f"/api/v1/admin/users/{user('admin').id}", json={"active": False}, headers=admin)
    assert response.status_code == 422


def test_unknown_user_is_404(client, admin):
    assert client.get("/api/v1/admin/users/9999", headers=admin).status_code == 404
