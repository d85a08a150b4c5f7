"""History that fits the context: what a long conversation sends the model, over HTTP with the real
SDK against the DashScope-protocol stub, counted with the Qwen tokenizer the dashscope package ships."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import dashscope
import pytest

from inventory_ai.config import Config, ConfigError
from tests.support.clients import AuthActions
from tests.support.dashscope_stub import Reply, tool_call

BUDGET = 1500
TOKENIZER = dashscope.get_tokenizer("qwen-plus")


def tokens(text: str) -> int:
    return len(TOKENIZER.encode(text, allowed_special=set()))


def warehouse_model(body: dict) -> Reply:
    """Searches (and looks at low stock, in the same round) when asked to find something, then
    answers from the results in two lines."""
    messages = body["input"]["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        found = [r for r in results if "materials" in r][-1]
        question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        names = "、".join(m["name"] for m in found["materials"][:3])
        return Reply(content=f"{question[:3]}找到：{names}。\n详细：共 {found['total']} 种，库存见上表。")
    if "查找" in last["content"]:
        search = tool_call("search_materials", {"keyword": "面粉", "limit": 5})
        return Reply(tool_calls=[search, tool_call("list_low_stock", {"limit": 3})])
    return Reply(content=f"{last['content'][:3]}好的，记下了。\n第二行不进摘要。")


@pytest.fixture
def long_conversation(qwen_app, stub):
    """Twelve turns, every other one with a search whose result is a few hundred tokens, and the
    thirteenth asked: the request for its answer is what is checked."""
    app = qwen_app(history_token_budget=BUDGET)
    stub.default = warehouse_model
    client = app.test_client()
    AuthActions(client).login("staff")
    conversation = None
    for n in range(1, 14):
        text = f"第{n:02d}问：帮我查找面粉原料" if n % 2 else f"第{n:02d}问：明天早上八点盘点"
        body = client.post("/api/v1/chat", json={"message": text, "conversation_id": conversation}).json
        assert body["status"] == "completed", body
        conversation = body["conversation_id"]
    return stub.requests[-1]["input"]["messages"]


def test_a_long_conversation_is_cut_to_the_budget_keeping_calls_with_results_and_a_summary(long_conversation):
    system, *history = long_conversation
    assert system["role"] == "system"
    # Fits the budget: its text, call names and arguments alone, counted by the Qwen tokenizer.
    text = sum(
        tokens(m["content"] or "")
        + sum(
            tokens(c["function"]["name"]) + tokens(c["function"]["arguments"])
            for c in m.get("tool_calls", [])
        )
        for m in history
    )
    assert text <= BUDGET
    # The newest turns are there in full, and the question being answered comes with its round.
    questions = [m["content"] for m in history[1:] if m["role"] == "user"]
    assert questions[-1] == "第13问：帮我查找面粉原料" and "第12问：明天早上八点盘点" in questions
    assert [c["function"]["name"] for c in history[-3]["tool_calls"]] == [
        "search_materials",
        "list_low_stock",
    ]
    assert history[-2]["role"] == "tool" and "高筋面粉" in history[-2]["content"]
    kept = [int(q[1:3]) for q in questions]
    assert kept == list(range(kept[0], 14)) and 3 <= len(kept) <= 6
    # The turns before them are one short user message: how many, then the newest of them as each
    # question and its answer's first line (a search turn and a plain one), oldest first.
    summary = history[0]["content"]
    assert history[0]["role"] == "user" and len(summary) < 600
    assert summary.startswith(f"[Earlier in this conversation, summarised: {kept[0] - 1} older turns")
    last, before = kept[0] - 1, kept[0] - 2
    ask = {
        n: f"第{n:02d}问：帮我查找面粉原料" if n % 2 else f"第{n:02d}问：明天早上八点盘点"
        for n in (last, before)
    }
    said = {n: f"第{n:02d}找到：高筋面粉" if n % 2 else f"第{n:02d}好的，记下了。" for n in (last, before)}
    assert summary.index(ask[before]) < summary.index(said[before]) < summary.index(ask[last])
    assert said[last] in summary
    assert "详细" not in summary and "第二行" not in summary  # first lines only
    assert "第01问" not in summary and not any(q.startswith("第01问") for q in questions)
    assert_calls_travel_with_their_results(history)


def assert_calls_travel_with_their_results(history: list[dict]) -> None:
    """Every assistant message with tool_calls is followed by one tool message per call, in order,
    and every tool message answers a call just made."""
    for i, message in enumerate(history):
        if message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            following = history[i + 1 : i + 1 + len(ids)]
            assert [m["role"] for m in following] == ["tool"] * len(ids)
            assert [m["tool_call_id"] for m in following] == ids
        if message["role"] == "tool":
            asked = next(m for m in reversed(history[:i]) if m["role"] != "tool")
            assert message["tool_call_id"] in [c["id"] for c in asked.get("tool_calls", [])]


def test_the_budget_is_a_setting_checked_at_start(monkeypatch, tmp_path):
    monkeypatch.setenv("INVENTORY_AI_SECRET_KEY", "x" * 32)
    assert Config.from_env(tmp_path).history_token_budget == 16000
    monkeypatch.setenv("INVENTORY_AI_HISTORY_TOKEN_BUDGET", "6000")
    assert Config.from_env(tmp_path).history_token_budget == 6000
    for bad in ("500", "lots"):
        monkeypatch.setenv("INVENTORY_AI_HISTORY_TOKEN_BUDGET", bad)
        with pytest.raises(ConfigError, match="INVENTORY_AI_HISTORY_TOKEN_BUDGET"):
            Config.from_env(tmp_path)


def run_isolated(code: str) -> str:
    """A fresh interpreter (no tokenizer loaded yet) where opening a network connection fails."""
    prelude = textwrap.dedent(
        """
        import socket
        def offline(*args, **kwargs):
            raise OSError("no network in this test")
        socket.socket.connect = socket.socket.connect_ex = offline
        socket.create_connection = socket.getaddrinfo = offline
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_tokenizer_is_read_from_the_installed_package_without_a_network():
    out = run_isolated(
        """
        from inventory_ai.assistant import tokens
        print(tokens.count("帮我查找面粉原料"), tokens.bound("帮我查找面粉原料"))
        """
    )
    counted, bound = map(int, out.split())
    assert counted == tokens("帮我查找面粉原料") and counted < bound


def test_without_tiktoken_history_is_counted_by_its_bytes():
    out = run_isolated(
        """
        import sys
        sys.modules["tiktoken"] = None  # not installed
        from inventory_ai.assistant import tokens
        print(tokens.count("帮我查找面粉原料"), tokens.bound("帮我查找面粉原料"))
        """
    )
    *logged, numbers = out.strip().splitlines()
    counted, bound = map(int, numbers.split())
    assert counted == bound == len("帮我查找面粉原料".encode())
    assert "tokenizer_unavailable" in logged[0]
