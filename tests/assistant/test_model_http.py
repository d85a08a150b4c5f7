"""The model calls' requests session prepares a call as requests itself does (model_http.py): the
same method, URL, headers in the same order, body, cookies and hooks, whether its preparation was
remembered or not, and whatever would make it differ (cookies, credentials, hooks, other bodies)."""

from __future__ import annotations

import json

import pytest
import requests

from inventory_ai.assistant.providers.model_http import model_http_session

URL = "https://dashscope.aliyuncs.com/api/v1/services/aigc/text-generation/generation"
BODY = json.dumps(
    {"model": "qwen-plus", "input": {"messages": [{"role": "user", "content": "面粉"}]}}
).encode()
HEADERS = {  # as the SDK sends them
    "Accept": "text/event-stream",
    "Authorization": "Bearer sk-test-0123456789abcdef",
    "Content-Type": "application/json; charset=utf-8",
    "X-Accel-Buffering": "no",
    "X-DashScope-SSE": "enable",
    "user-agent": "dashscope/1.27.8; python/3.11.7",
}


def as_requests_does(session: requests.Session, request: requests.Request) -> requests.PreparedRequest:
    return requests.Session.prepare_request(session, request)


def seen(prepared: requests.PreparedRequest) -> tuple:
    return (
        prepared.method,
        prepared.url,
        list(prepared.headers.items()),
        prepared.body,
        prepared.hooks,
        prepared._body_position,
        sorted((c.domain, c.name, c.value) for c in prepared._cookies),
        type(prepared.headers),
        type(prepared._cookies),
    )


def call(url=URL, data=BODY, headers=None, **more) -> requests.Request:
    """What Session.request makes of the SDK's `session.post(url=, data=, headers=, ...)`."""
    return requests.Request(
        method="POST", url=url, headers=dict(HEADERS if headers is None else headers), files=None,
        data=data or {}, params={}, **more,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def no_netrc(monkeypatch, tmp_path):
    monkeypatch.setenv("NETRC", str(tmp_path / "absent"))  # the runner's own ~/.netrc plays no part


def test_the_sdks_call_is_prepared_as_requests_prepares_it_the_first_time_and_after():
    session = model_http_session()
    for _ in range(3):  # the first time it is worked out, then remembered
        assert seen(session.prepare_request(call())) == seen(as_requests_does(session, call()))


def test_remembered_headers_are_copied_not_shared():
    session = model_http_session()
    first = session.prepare_request(call())
    first.headers["X-Added"] = "1"  # as a hook or an auth handler may do to one request
    second = session.prepare_request(call())
    assert "X-Added" not in second.headers
    assert seen(second) == seen(as_requests_does(session, call()))


@pytest.mark.parametrize(
    "change",
    [
        "session header added",
        "session header removed",
        "call header changed",
        "call header set to None",
        "another url",
        "url with spaces and unicode",
        "url with a port and query",
        "header case differs",
    ],
)
def test_what_changes_the_headers_or_url_changes_the_prepared_call(change):
    session = model_http_session()
    session.prepare_request(call())  # remembered before the change
    headers, url = dict(HEADERS), URL
    if change == "session header added":
        session.headers["X-Plant"] = "north"
    elif change == "session header removed":
        del session.headers["Accept-Encoding"]
    elif change == "call header changed":
        headers["Authorization"] = "Bearer sk-other"
    elif change == "call header set to None":
        headers["Accept"] = None
    elif change == "another url":
        url = "http://127.0.0.1:8081/api/v1/services/aigc/text-generation/generation"
    elif change == "url with spaces and unicode":
        url = "https://dashscope.aliyuncs.com/api/v1/a b/面粉?q=1 2"
    elif change == "url with a port and query":
        url = "https://dashscope.aliyuncs.com:8443/api/v1/x?a=1&b=%20"
    elif change == "header case differs":
        headers["ACCEPT"] = headers.pop("Accept")
    for _ in range(2):
        ours = session.prepare_request(call(url=url, headers=headers))
        assert seen(ours) == seen(as_requests_does(session, call(url=url, headers=headers)))


def test_credentials_cookies_and_hooks_are_added_as_requests_adds_them(monkeypatch, tmp_path):
    session = model_http_session()
    session.prepare_request(call())
    # credentials in the URL
    with_credentials = "https://user:secret@dashscope.aliyuncs.com/api/v1/x"
    ours = session.prepare_request(call(url=with_credentials))
    assert "Authorization" in ours.headers and ours.headers["Authorization"].startswith("Basic ")
    assert seen(ours) == seen(as_requests_does(session, call(url=with_credentials)))
    # credentials in ~/.netrc (looked for on every call, as requests does)
    netrc = tmp_path / "netrc"
    netrc.write_text("machine dashscope.aliyuncs.com login plant password secret\n")
    monkeypatch.setenv("NETRC", str(netrc))
    headers = {k: v for k, v in HEADERS.items() if k != "Authorization"}
    ours = session.prepare_request(call(headers=headers))
    assert ours.headers["Authorization"].startswith("Basic ")
    assert seen(ours) == seen(as_requests_does(session, call(headers=headers)))
    monkeypatch.setenv("NETRC", str(tmp_path / "absent"))
    # a cookie the server set, and one the call gives
    session.cookies.set("acw_tc", "abc", domain="dashscope.aliyuncs.com", path="/")
    ours = session.prepare_request(call())
    assert ours.headers["Cookie"] == "acw_tc=abc"
    assert seen(ours) == seen(as_requests_does(session, call()))
    session.cookies.clear()
    ours = session.prepare_request(call(cookies={"k": "v"}))
    assert seen(ours) == seen(as_requests_does(session, call(cookies={"k": "v"})))
    # hooks, of the session and of the call
    session.hooks["response"].append(lambda r, **kw: r)
    assert seen(session.prepare_request(call())) == seen(as_requests_does(session, call()))
    session.hooks["response"].clear()
    hooked = call(hooks={"response": [lambda r, **kw: r]})
    assert len(session.prepare_request(hooked).hooks["response"]) == 1
    # the session's own auth
    session.auth = ("plant", "secret")
    assert seen(session.prepare_request(call())) == seen(as_requests_does(session, call()))


@pytest.mark.parametrize(
    "more",
    [{"data": None}, {"data": "text"}, {"data": {"a": "1"}}, {"json": {"a": 1}, "data": None}],
    ids=["no body", "text body", "form body", "json body"],
)
def test_other_bodies_are_prepared_as_requests_prepares_them(more):
    session = model_http_session()
    session.prepare_request(call())
    data = more.pop("data")
    ours = session.prepare_request(call(data=data, **more))
    assert seen(ours) == seen(as_requests_does(session, call(data=data, **more)))


def test_a_bad_url_fails_as_in_requests():
    session = model_http_session()
    for url in ("dashscope.aliyuncs.com/api/v1", "https://", "https://*.example/x"):
        with pytest.raises(requests.exceptions.RequestException) as ours:
            session.prepare_request(call(url=url))
        with pytest.raises(requests.exceptions.RequestException) as theirs:
            as_requests_does(session, call(url=url))
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
