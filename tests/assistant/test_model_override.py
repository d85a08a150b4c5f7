"""The one seam a test puts a model in through: `ToolExecutionManager.override`, with the scripted
model shipped in inventory_ai/assistant/testing.py."""

from __future__ import annotations

import pytest

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.testing import ScriptedProvider, answer, call, calls


def test_inside_the_block_the_given_model_answers_and_the_configured_chain_comes_back(client, auth):
    configured = manager().models.provider_factory
    auth.login("staff")
    with manager().override(provider=ScriptedProvider(answer("scripted words"))) as model:
        body = client.post("/api/v1/chat", json={"message": "你好"}).json
    assert body["reply"] == "scripted words" and body["model"] == "scripted-1"
    assert len(model.requests) == 1 and model.requests[0].messages[-1].content == "你好"
    assert manager().models.provider_factory is configured
    after = client.post("/api/v1/chat", json={"message": "哪些原料库存不足？"}).json
    assert after["model"] == "offline"


def test_overrides_nest_and_unwind_in_order(client, auth):
    auth.login("staff")
    outer = ScriptedProvider(calls(call("list_low_stock", {"limit": 3})), answer("outer"))
    with manager().override(provider=outer):
        with manager().override(provider=ScriptedProvider(answer("inner"))):
            assert client.post("/api/v1/chat", json={"message": "a"}).json["reply"] == "inner"
        body = client.post("/api/v1/chat", json={"message": "b"}).json
    assert body["reply"] == "outer" and [r["tool_calls"][0]["name"] for r in body["rounds"]] == [
        "list_low_stock"
    ]


def test_a_chain_of_providers_can_stand_in_for_the_configured_one(client, auth):
    auth.login("staff")
    down = ScriptedProvider(ProviderError("the model is down", code="service_unavailable"))
    second = ScriptedProvider(answer("from the second"))
    with manager().override(providers=lambda _session: (down, second)):
        body = client.post("/api/v1/chat", json={"message": "a"}).json
    assert body["reply"] == "from the second" and len(down.requests) == len(second.requests) == 1


def test_the_seam_takes_one_provider_or_one_chain(app):
    with pytest.raises(TypeError), manager().override():
        pass
    with pytest.raises(TypeError), manager().override(ScriptedProvider(), providers=lambda _s: ()):
        pass
