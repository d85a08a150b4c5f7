"""Test clients as a browser or a script would be: a fresh login state per request, and logged in."""

from __future__ import annotations

from flask import g, has_app_context
from flask.testing import FlaskClient
from sqlalchemy import select

from inventory_ai.auth import issue_token
from inventory_ai.models import User
from tests.support.databases import PASSWORD


class FreshUserClient(FlaskClient):
    """The fixture keeps an app context pushed for db access, and Flask-Login caches the user in
    `g`; a real server starts every request without it, so this client does too."""

    def open(self, *args, **kwargs):
        if has_app_context():
            g.pop("_login_user", None)
            g.pop("csrf_token", None)  # Flask-WTF caches the session's token in g as well
        return super().open(*args, **kwargs)


class AuthActions:
    """Log a test client in through the API and send the CSRF token on its later writes."""

    def __init__(self, client):
        self.client = client

    def login(self, username: str = "staff", password: str = PASSWORD):
        response = self.client.post("/api/v1/auth/login", json={"username": username, "password": password})
        if response.status_code == 200:
            self.client.environ_base["HTTP_X_CSRFTOKEN"] = response.json["csrf_token"]
        return response

    def logout(self):
        return self.client.post("/api/v1/auth/logout")


def client_for(app, username: str = "staff"):
    """A client of the app logged in as `username` (through the API, as the page's script does)."""
    client = app.test_client()
    AuthActions(client).login(username)
    return client


def bearer(session, username: str) -> dict:
    """The headers of a script acting as `username` with an API token of its own. An admin's script
    asks for the `admin` scope (the admin API's writes need it)."""
    user = session.scalar(select(User).where(User.username == username))
    _, plain = issue_token(
        user, "test", scopes=("read", "chat", "admin") if user.is_admin else ("read", "chat")
    )
    session.commit()
    return {"Authorization": f"Bearer {plain}"}


def ask(app, username: str, text: str) -> dict:
    """The answer `username` gets to one chat message (the JSON of POST /api/v1/chat)."""
    return client_for(app, username).post("/api/v1/chat", json={"message": text}).json


def first_call(answer: dict) -> dict | None:
    """The first tool call of an answer's first round, if it made one."""
    return answer["rounds"][0]["tool_calls"][0] if answer["rounds"] else None


def approve(client, message_id: str, **body):
    """The client approves the calls an answer waits on (POST .../decision; `body` adds to it, or
    says otherwise): the response."""
    return client.post(f"/api/v1/chat/messages/{message_id}/decision", json={"decision": "approve", **body})


def calls_first(app, role: str, text: str, tool: str | None, expected: dict | None) -> None:
    """The first tool call (name and the arguments named) of the answer, or no call and a question."""
    body = ask(app, role, text)
    call = first_call(body)
    if tool is None:
        assert call is None and ("?" in body["reply"] or "？" in body["reply"])
        return
    assert call["name"] == tool
    assert {k: call["arguments"].get(k) for k in expected} == expected


def sign_off(client, call_id: str, **body):
    """The client, as the second person, approves a booking waiting for a sign-off (POST
    /approvals/{call_id}/decision; `body` adds to it, or says otherwise): the response."""
    return client.post(f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve", **body})


def teaches(app, role: str, text: str, tool: str, phrase: str) -> None:
    """The answer's first call teaches the offline assistant `phrase` for `tool` (a new intent)."""
    call = first_call(ask(app, role, text))
    assert call["name"] == "create_new_intent"
    assert call["arguments"]["tool_name"] == tool and phrase in call["arguments"]["keywords"]
