"""The embedded offline provider: its evaluation set, its answers, and its honesty."""

from __future__ import annotations

import json

import pytest

from inventory_ai.assistant.providers.offline import OfflineProvider
from inventory_ai.assistant.setup import manager, offline_lexicon
from inventory_ai.assistant.types import Message, ModelRequest
from tests.offline_eval import CASES


def first_step(session, text: str, role: str = "admin"):
    toolbox = manager().registry.toolbox_for(role, session)
    provider = OfflineProvider(offline_lexicon(session))
    reply = provider.reply(
        ModelRequest(messages=(Message("system", "s"), Message("user", text)), tools=toolbox.specs())
    )
    if not reply.tool_calls:
        return None, {}
    call = reply.tool_calls[0]
    return call.name, json.loads(call.arguments)


def matches(expected_tool, expected_args, tool, args) -> bool:
    if tool != expected_tool:
        return False
    for key, value in expected_args.items():
        got = args.get(key)
        if isinstance(value, str) and isinstance(got, str):
            if got.lower() != value.lower():
                return False
        elif got != value:
            return False
    return True


def test_the_evaluation_set_is_big_enough_and_bilingual():
    zh = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c[0])]
    assert len(CASES) >= 60 and len(zh) >= 30 and len(CASES) - len(zh) >= 30


def test_evaluation_accuracy(session):
    misses = []
    for text, tool, args in CASES:
        got_tool, got_args = first_step(session, text)
        if not matches(tool, args, got_tool, got_args):
            misses.append(f"{text!r}: expected {tool} {args}, got {got_tool} {got_args}")
    accuracy = 1 - len(misses) / len(CASES)
    assert accuracy >= 0.95, f"accuracy {accuracy:.0%}; misses:\n" + "\n".join(misses)


def test_it_never_offers_a_tool_the_user_lacks(session):
    tool, _ = first_step(session, "申请采购低筋面粉500公斤", role="warehouse_staff")
    assert tool != "create_purchase_request"


def test_answers_come_from_tool_results_in_the_users_language(client, auth):
    auth.login("staff")
    zh = client.post("/api/v1/chat", json={"message": "冷库有哪些缺货"}).json["reply"]
    assert zh.startswith("有 ") and "低于补货点" in zh
    en = client.post("/api/v1/chat", json={"message": "details of M001"}).json["reply"]
    assert en.startswith("Bread Flour 高筋面粉 (M001): 100 kg in stock")


def test_an_ambiguous_detail_falls_back_to_a_search(client, auth):
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "黄油单价多少"}).json
    names = [c["name"] for r in body["rounds"] for c in r["tool_calls"]]
    assert names == ["get_material_detail", "search_materials"]
    assert "无盐黄油" in body["reply"] and "有盐黄油" in body["reply"]


def test_a_report_is_made_from_the_data_it_gathered(client, auth):
    auth.login("manager")
    body = client.post("/api/v1/chat", json={"message": "生成低库存报表"}).json
    names = [c["name"] for r in body["rounds"] for c in r["tool_calls"]]
    assert names == ["list_low_stock", "format_report"]
    assert body["reply"].startswith("### 生成低库存报表") and "| code |" in body["reply"]


@pytest.mark.parametrize("text", ["你好", "hello", "火箭什么时候发射？"])
def test_greetings_and_unknown_requests_get_help_without_a_tool(client, auth, text):
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": text}).json
    assert body["rounds"] == [] and body["status"] == "completed"
    assert ("查找原料" in body["reply"]) or ("find materials" in body["reply"])


def test_intents_added_by_an_admin_route_new_words(client, auth, session):
    from inventory_ai.services.intents import create_intent

    create_intent(
        session,
        "dough_words",
        ["面团用料"],
        "search_materials",
        manager().registry.names(),
        {"category": "面粉类"},
    )
    auth.login("staff")
    body = client.post("/api/v1/chat", json={"message": "面团用料 高筋"}).json
    call = body["rounds"][0]["tool_calls"][0]
    assert call["name"] == "search_materials" and call["arguments"]["category"] == "面粉类"
