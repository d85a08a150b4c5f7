"""What must never leak: the secrets in a failing tool's exception reach no response, message to the
model, stored round or log line; password hashes and tokens appear in no response."""

from __future__ import annotations

import io
import json

from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.logging import configure_logging
from inventory_ai.models import ToolCallRecord
from tests.support.scripted import ScriptedProvider, answer, call, calls, use

CANARY_KEY = "sk-canary0123456789abcdef"
CANARY_MAIL = "zhang.wei@example-bakery.cn"
CANARY_PATH = "/srv/inventory_ai/secret/config.py"


class Leaky(ToolExecutor):
    name = "leaky_tool"
    labels = help = ("测试", "test")
    description = "fails with secrets in its exception"
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, arguments, context):
        raise RuntimeError(f"cannot open {CANARY_PATH} with key {CANARY_KEY} for {CANARY_MAIL}")


def test_canaries_leak_nowhere(app, client, auth, session):
    """A tool fails with a key, a path and an e-mail address in its exception: none of them reaches
    the API response, the tool message given to the model, the stored round or a log line."""
    manager().registry.register(Leaky())
    model = use(app, ScriptedProvider(calls(call("leaky_tool", {}, "call_leak")), answer("sorry")))
    logs = io.StringIO()
    configure_logging(production=True, file=logs)
    auth.login("staff")
    response = client.post("/api/v1/chat", json={"message": "run it"})
    sent_to_model = model.requests[1].messages[-1].content
    stored = session.scalar(select(ToolCallRecord.content).where(ToolCallRecord.model_call_id == "call_leak"))
    for place, text in (
        ("response", response.get_data(as_text=True)),
        ("model", sent_to_model),
        ("database", stored),
        ("logs", logs.getvalue()),
    ):
        for canary in (CANARY_KEY, CANARY_MAIL, CANARY_PATH):
            assert canary not in text, f"{canary} leaked into the {place}"
    crash = next(json.loads(line) for line in logs.getvalue().splitlines() if '"tool_crashed"' in line)
    assert crash["error_type"] == "RuntimeError" and "Traceback" not in logs.getvalue()
    assert "test_nothing_secret_leaks:execute:" in crash["error_at"][-1]  # where, without a file path
    assert crash["error_message"] == "cannot open [path] with key [redacted] for [redacted]"


def test_password_hashes_and_tokens_never_appear_in_responses(client, auth, session, user):
    auth.login("admin")
    users = client.get("/api/v1/admin/users").get_data(as_text=True)
    assert "pbkdf2" not in users and "scrypt" not in users and "password" not in users
    issued = client.post("/api/v1/auth/tokens", json={"name": "x"}).json["token"]
    assert issued not in client.get("/api/v1/auth/tokens").get_data(as_text=True)
