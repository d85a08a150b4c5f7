"""The DashScope provider through the real dashscope SDK, over HTTP, against a local server that
speaks DashScope's protocol. The SDK is never mocked."""

from __future__ import annotations

import io
import json
import time
from concurrent.futures import ThreadPoolExecutor

import dashscope
import pybreaker
import pytest
import redis

from inventory_ai import create_app
from inventory_ai.assistant.providers.base import ModelUnavailable, ProviderError
from inventory_ai.assistant.providers.breaker import ModelBreaker, TrialGate, shared_breaker
from inventory_ai.assistant.providers.dashscope import DashScopeProvider
from inventory_ai.assistant.providers.model_http import model_http_session
from inventory_ai.assistant.types import (
    Message,
    ModelReply,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolSpec,
)
from inventory_ai.config import config_for_tests
from inventory_ai.logging import configure_logging
from tests.support.clients import AuthActions
from tests.support.dashscope_stub import Error, NonJson, Reply, StreamError, tool_call
from tests.support.databases import let_go

API_KEY = "sk-test-0123456789abcdef"
SEARCH = ToolSpec(
    "search_materials",
    "find materials",
    {
        "type": "object",
        "properties": {"keyword": {"type": "string"}},
        "required": ["keyword"],
        "additionalProperties": False,
    },
)


def provider(stub, breaker=None, **kw) -> DashScopeProvider:
    return DashScopeProvider(
        api_key=API_KEY,
        model="qwen-plus",
        base_url=stub.base_url,
        breaker=breaker or shared_breaker(None),
        backoff_seconds=0.01,
        timeout_seconds=5,
        **kw,
    )


def request(*tools: ToolSpec) -> ModelRequest:
    return ModelRequest(messages=(Message("system", "sys"), Message("user", "帮我查找面粉原料")), tools=tools)


def drain(p: DashScopeProvider, req: ModelRequest):
    chunks = list(p.stream(req))
    assert isinstance(chunks[-1], ModelReply)
    return chunks[:-1], chunks[-1]


def test_streamed_text_arrives_in_pieces_with_usage(stub):
    stub.then(Reply(content="找到两种面粉：高筋面粉和低筋面粉。", usage=(30, 12)))
    deltas, reply = drain(provider(stub), request())
    assert len(deltas) > 1 and all(isinstance(d, TextDelta) for d in deltas)
    assert "".join(d.text for d in deltas) == reply.text == "找到两种面粉：高筋面粉和低筋面粉。"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (30, 12)
    assert reply.tool_calls == ()


def test_what_the_server_receives(stub):
    stub.then(Reply(content="ok"))
    drain(provider(stub), request(SEARCH))
    body, headers = stub.requests[0], stub.headers[0]
    assert body["model"] == "qwen-plus"
    assert body["input"]["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "帮我查找面粉原料"},
    ]
    params = body["parameters"]
    assert params["tools"] == [SEARCH.to_wire()]
    assert params["tool_choice"] == "auto" and params["parallel_tool_calls"] is True
    assert params["result_format"] == "message" and params["incremental_output"] is True
    assert headers["X-DashScope-SSE"] == "enable"
    assert headers["Authorization"] == f"Bearer {API_KEY}"


def test_concurrent_calls_reuse_kept_alive_connections(stub):
    """A new connection per model call is a TLS handshake per answer in production. The SDK's own
    pool keeps 10; the process's session keeps one per thread, so a second wave opens none."""
    stub.default = Reply(content="好的。", delay=0.05)
    p = provider(stub, http=model_http_session())
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _wave in range(2):
            replies = list(pool.map(lambda _: drain(p, request())[1], range(16)))
            assert [r.text for r in replies] == ["好的。"] * 16
    assert stub.connections <= 16


def test_parallel_tool_call_fragments_are_joined_by_index(stub):
    calls = [
        tool_call("search_materials", {"keyword": "面粉"}, "call_a"),
        tool_call("search_materials", {"keyword": "低筋面粉和糖"}, "call_b"),
    ]
    stub.then(Reply(tool_calls=calls, finish_reason="stop"))  # "stop" although tools were called
    _, reply = drain(provider(stub), request(SEARCH))
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_a", "search_materials", {"keyword": "面粉"}),
        ("call_b", "search_materials", {"keyword": "低筋面粉和糖"}),
    ]


def test_thinking_is_reasoning_never_the_answer(stub):
    stub.then(Reply(reasoning="用户想找面粉，我应该调用搜索。", content="好的。"))
    deltas, reply = drain(provider(stub, enable_thinking=True), request())
    assert (
        "".join(d.text for d in deltas if isinstance(d, ReasoningDelta)) == "用户想找面粉，我应该调用搜索。"
    )
    assert reply.text == "好的。" and reply.reasoning.startswith("用户想找面粉")
    assert stub.requests[0]["parameters"]["enable_thinking"] is True


def test_invalid_key_is_not_retried(stub):
    stub.then(Error(401, "InvalidApiKey", "Invalid API-key provided."))
    with pytest.raises(ProviderError) as caught:
        drain(provider(stub), request())
    assert caught.value.code == "InvalidApiKey" and len(stub.requests) == 1
    assert API_KEY not in str(caught.value)


def test_data_inspection_failure_is_not_retried(stub):
    stub.then(Error(400, "DataInspectionFailed", "Input data may contain inappropriate content."))
    with pytest.raises(ProviderError):
        drain(provider(stub), request())
    assert len(stub.requests) == 1


def test_throttling_and_server_errors_are_retried_then_succeed(stub):
    stub.then(
        Error(429, "Throttling.RateQuota", "Requests rate limit exceeded"),
        NonJson(),
        Reply(content="终于好了"),
    )
    _, reply = drain(provider(stub), request())
    assert reply.text == "终于好了" and len(stub.requests) == 3


def test_repeated_failures_open_the_breaker_which_then_answers_without_calling(stub):
    breaker = shared_breaker(None)
    stub.then(*[Error(500, "InternalError", "boom")] * 3)
    with pytest.raises(ProviderError) as caught:
        drain(provider(stub, breaker=breaker), request())
    assert caught.value.code in ("InternalError", "model_unavailable")
    assert breaker.state == pybreaker.STATE_OPEN
    with pytest.raises(ModelUnavailable) as unavailable:
        drain(provider(stub, breaker=breaker), request())
    assert 1 <= unavailable.value.retry_after <= 30
    assert len(stub.requests) == 3  # the open breaker did not call the server


def test_half_open_lets_one_trial_through_and_closes_on_success(stub):
    breaker = ModelBreaker(
        pybreaker.CircuitBreaker(fail_max=1, reset_timeout=0.3, throw_new_error_on_trip=False), TrialGate()
    )
    stub.then(Error(500, "InternalError"))
    with pytest.raises(ProviderError):
        drain(provider(stub, breaker=breaker, max_attempts=1), request())
    assert breaker.state == pybreaker.STATE_OPEN
    time.sleep(0.35)
    stub.then(Reply(content="back"))
    _, reply = drain(provider(stub, breaker=breaker), request())
    assert reply.text == "back" and breaker.state == pybreaker.STATE_CLOSED


def test_a_stream_that_breaks_mid_way_is_an_error(stub):
    stub.then(StreamError(code="InternalError", message="upstream reset", chunks=2))
    chunks = []
    with pytest.raises(ProviderError) as caught:
        for chunk in provider(stub).stream(request()):
            chunks.append(chunk)
    assert [c.text for c in chunks] == ["部分", "部分"]  # what arrived was shown, then the error
    assert caught.value.code == "InternalError"
    assert len(stub.requests) == 1  # never retried once the user has seen output


def test_connection_refused_is_a_provider_error(stub):
    dead = DashScopeProvider(
        api_key=API_KEY,
        model="qwen-plus",
        base_url="http://127.0.0.1:9/api/v1",
        breaker=shared_breaker(None),
        backoff_seconds=0.01,
        max_attempts=2,
    )
    with pytest.raises(ProviderError) as caught:
        drain(dead, request())
    assert caught.value.code == "ConnectionError"


def test_the_stub_also_speaks_cumulative_streams_to_the_sdk(stub):
    stub.then(Reply(content="累积模式的回答"))
    responses = list(
        dashscope.Generation.call(
            model="qwen-plus",
            api_key=API_KEY,
            messages=[{"role": "user", "content": "hi"}],
            result_format="message",
            stream=True,
            incremental_output=False,
            base_address=stub.base_url,
        )
    )
    texts = [r.output.choices[0].message.content for r in responses]
    assert texts[-1] == "累积模式的回答" and texts[0] != texts[-1] and texts[-1].startswith(texts[0])


def test_breaker_state_is_shared_through_redis():
    client = redis.Redis.from_url("redis://127.0.0.1:6379/15")
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    client.flushdb()
    first, second = shared_breaker("redis://127.0.0.1:6379/15"), shared_breaker("redis://127.0.0.1:6379/15")
    for _ in range(3):
        first.record(ProviderError("boom"), trial=False)
    assert second.state == pybreaker.STATE_OPEN
    with pytest.raises(ModelUnavailable):
        second.before_call()
    client.flushdb()


# --- end to end through POST /api/v1/chat -----------------------------------------------------


@pytest.fixture
def dashscope_app(database_url, tmp_path, monkeypatch, stub):
    monkeypatch.chdir(tmp_path)
    config = config_for_tests(database_url)
    config.llm_provider, config.dashscope_api_key, config.dashscope_base_url = (
        "dashscope",
        API_KEY,
        stub.base_url,
    )
    config.model_backoff_seconds = 0.01
    config.llm_fallback = ()  # these tests are about the model itself failing: no fallback answers
    app = create_app(config)
    with app.app_context():
        yield app
    let_go(app)


def seed_example(stub):
    def final(body):
        tool_message = body["input"]["messages"][-1]
        found = json.loads(tool_message["content"])
        names = "、".join(m["name"] for m in found["materials"][:2])
        return Reply(content=f"为您找到：{names}。")

    stub.then(
        Reply(
            content="我来查一下。",
            tool_calls=[tool_call("search_materials", {"keyword": "面粉"}, "call_flour")],
        ),
        final,
    )


def test_the_seed_example_end_to_end_as_json(dashscope_app, stub):
    seed_example(stub)
    client = dashscope_app.test_client()
    AuthActions(client).login("staff")
    logs = io.StringIO()
    configure_logging(production=True, file=logs)
    response = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"})
    body = response.json
    assert response.status_code == 200 and body["status"] == "completed"
    assert body["reply"] == "为您找到：高筋面粉、低筋面粉。"
    [asked] = body["rounds"][0]["tool_calls"]
    assert asked["name"] == "search_materials" and asked["arguments"] == {"keyword": "面粉"}
    # The product's own id for the call (the model's may repeat), the same in calls and results.
    assert asked["id"].startswith("call_") and asked["id"] != "call_flour"
    assert body["rounds"][0]["results"][0]["tool_call_id"] == asked["id"]
    assert body["rounds"][0]["assistant_response"] == "我来查一下。"
    assert body["usage"] == {"input_tokens": 24, "output_tokens": 14}
    # What went back to the model: the assistant's call unchanged, one tool message with its id.
    second = stub.requests[1]["input"]["messages"]
    assistant = [m for m in second if m["role"] == "assistant"][-1]
    assert assistant["tool_calls"] == [
        {
            "id": "call_flour",
            "type": "function",
            "function": {"name": "search_materials", "arguments": '{"keyword": "面粉"}'},
        }
    ]
    tools = [m for m in second if m["role"] == "tool"]
    assert len(tools) == 1 and tools[0]["tool_call_id"] == "call_flour"
    assert "reasoning_content" not in json.dumps(second)
    assert API_KEY not in response.get_data(as_text=True) and API_KEY not in logs.getvalue()


def test_the_seed_example_end_to_end_as_server_sent_events(dashscope_app, stub):
    seed_example(stub)
    client = dashscope_app.test_client()
    AuthActions(client).login("staff")
    response = client.post(
        "/api/v1/chat", json={"message": "帮我查找面粉原料"}, headers={"Accept": "text/event-stream"}
    )
    assert response.mimetype == "text/event-stream"
    events = [
        (
            block.split("\n")[0].removeprefix("event: "),
            json.loads(block.split("\n")[1].removeprefix("data: ")),
        )
        for block in response.get_data(as_text=True).strip().split("\n\n")
    ]
    kinds = [k for k, _ in events]
    assert kinds[0] == "start" and kinds[1] == "delta" and kinds[-1] == "done"
    assert events[0][1] == {
        "conversation_id": events[-1][1]["conversation_id"],
        "message_id": events[-1][1]["message_id"],
    }
    assert kinds.index("tool_call_start") < kinds.index("tool_result") < len(kinds) - 1
    start = dict(events)["tool_call_start"]
    assert start["name"] == "search_materials" and start["arguments"] == {"keyword": "面粉"}
    assert dict(events)["done"]["reply"] == "为您找到：高筋面粉、低筋面粉。"
    assert "".join(d["text"] for k, d in events if k == "delta").endswith("为您找到：高筋面粉、低筋面粉。")


def test_an_open_breaker_is_a_503_with_retry_after_and_the_message_is_kept(dashscope_app, stub):
    stub.then(*[Error(500, "InternalError")] * 3)
    client = dashscope_app.test_client()
    AuthActions(client).login("staff")
    first = client.post("/api/v1/chat", json={"message": "面粉"})
    assert first.status_code == 200 and first.json["status"] == "failed"
    second = client.post("/api/v1/chat", json={"message": "还在吗"})
    assert second.status_code == 503 and int(second.headers["Retry-After"]) >= 1
    assert (
        second.json["error"]["code"] == "model_unavailable" and "秒后重试" in second.json["error"]["message"]
    )
    conversation = client.get(
        f"/api/v1/conversations/{second.json['error']['details']['conversation_id']}"
    ).json
    assert conversation["messages"][0]["content"] == "还在吗"  # the user's words were stored


def test_the_model_session_reads_the_environment_once_per_host(monkeypatch):
    """Proxies and the CA bundle from the environment still apply, read once rather than per call
    (a scan of every variable each time was most of a millisecond a model call)."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.plant.example:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    session = model_http_session()
    first = session.merge_environment_settings("https://dashscope.aliyuncs.com/api/v1", {}, True, None, None)
    assert first["proxies"]["https"] == "http://proxy.plant.example:3128" and first["stream"] is True
    monkeypatch.setenv("HTTPS_PROXY", "http://another.example:8080")
    again = session.merge_environment_settings("https://dashscope.aliyuncs.com/x", {}, None, None, None)
    assert again["proxies"]["https"] == "http://proxy.plant.example:3128"  # as read at the first call
    own = session.merge_environment_settings(
        "https://dashscope.aliyuncs.com/x", {"https": "http://p:1"}, None, None, None
    )
    assert own["proxies"]["https"] == "http://p:1"  # a call's own proxies win, as in requests
