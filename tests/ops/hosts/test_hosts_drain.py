"""A host drained as docs/operations.md says ("Draining a host"): SIGTERM to its master while
answers run on it. It serves no new request from then on (the balancer's next one goes to the
other host), lets the answers in flight finish within its grace, and exits cleanly."""

from __future__ import annotations

import signal
import time

import requests

from tests.support.hosts import EventStream, chat

ANSWERS = 3


def test_a_host_drained_with_answers_running_lets_them_finish_and_takes_nothing_new(site, model):
    a, b = site.a, site.b
    model.answers(model.slow("讲完了。"))
    askers = [site.person(log_in_on=a) for _ in range(ANSWERS)]
    streams, started = [], []
    try:
        for person in askers:
            stream = EventStream(person.post(a, "/api/v1/chat", json={"message": "慢慢讲"}, headers={"Accept": "text/event-stream"}, stream=True, timeout=120))  # fmt: skip
            streams.append(stream)
            started.append((person, stream.start()))
        deadline = time.monotonic() + 60
        while model.waiting < ANSWERS and time.monotonic() < deadline:
            time.sleep(0.1)
        assert model.waiting == ANSWERS

        a.process.send_signal(signal.SIGTERM)
        # Its workers stop accepting: a new connection is refused, or (their listening sockets stay
        # open until they exit) waits in the kernel's queue unanswered. Either way no new request
        # is served; the balancer's probe with a short timeout sees the host gone.
        unanswered, deadline = False, time.monotonic() + 30
        while not unanswered and time.monotonic() < deadline:
            try:
                requests.get(f"{a.base}/healthz", timeout=3)
                time.sleep(0.2)
            except (requests.ConnectionError, requests.Timeout):
                unanswered = True
        assert unanswered, "the draining host still answered new requests"
        for person, start in started:  # still being answered, on the host that drains
            assert person.get(b, f"/api/v1/chat/messages/{start['message_id']}").json()["status"] == "running"

        model.released.set()  # the model finishes its answers
        for stream in streams:  # each to its end, on the connection it started on
            kinds = stream.kinds_to_the_end()
            assert "delta" in kinds and kinds[-1] == "done", kinds
        assert a.process.wait(timeout=60) == 0
        for person, start in started:
            answer = person.get(b, f"/api/v1/chat/messages/{start['message_id']}").json()
            assert answer["status"] == "completed" and answer["reply"] == "讲完了。", answer
            nxt = chat(person, b, "还有吗", conversation_id=start["conversation_id"])
            assert nxt.status_code == 200 and nxt.json()["status"] == "completed", nxt.text
    finally:
        for stream in streams:
            stream.close()
        a.stop()
        a.start()  # host a again, for whatever runs after this
