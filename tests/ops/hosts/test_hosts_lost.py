"""A host lost with answers running: host a is killed (SIGKILL to its master and every worker at
once, as a machine that dies) while 20 answers run on it, half of them approvals whose booking is
done and whose model is still talking. Host b, left alone, ends every one of them within 60 s (its
heartbeat thread's sweep; nobody touches them meanwhile), none stays `running`, each conversation
takes its next message on b, and every approved booking is in the ledger once."""

from __future__ import annotations

import contextlib
import threading
import time

import requests

from tests.support.dashscope_stub import Reply, tool_call
from tests.support.hosts import EventStream, chat

ANSWERS = 20
CRASH_ENDS_WITHIN = 60  # seconds: the contract's promise for an answer whose process died
DELIVERY = {
    "material": "M005",
    "warehouse": "主仓库",
    "movement_type": "inbound",
    "quantity": 10,
    "unit": "kg",
    "reason": "到货",
}


def running(site, ids: list[str]) -> list[str]:
    return [
        row[0]
        for row in site.sql("SELECT id FROM messages WHERE id = ANY(%(ids)s) AND status = 'running'", ids=ids)
    ]


def m005_in_main(site):
    [(level,)] = site.sql(
        "SELECT l.quantity FROM stock_levels l JOIN materials m ON m.id = l.material_id "
        "JOIN warehouses w ON w.id = l.warehouse_id WHERE m.code = 'M005' AND w.code = 'WH01'"
    )
    return level


def each_approved_booking_is_in_the_ledger_once(site, b, approvals) -> None:
    """Every approved booking is in the ledger once, its call says so, and the same approval again
    (now on b) is 409: it was decided; nothing more is booked."""
    for person, message_id, call_id in approvals:
        assert site.sql(
            "SELECT count(*) FROM stock_movements WHERE idempotency_key = %(key)s", key=f"chat:{call_id}"
        ) == [(1,)]
        assert site.sql("SELECT status FROM tool_calls WHERE call_id = %(id)s", id=call_id) == [("success",)]
        again = person.post(b, f"/api/v1/chat/messages/{message_id}/decision", json={"decision": "approve"})
        assert again.status_code == 409, again.text


def each_conversation_goes_on(b, answers) -> None:
    """Each conversation takes its next message, on b."""
    for person, message_id, conversation_id in answers:
        seen = person.get(b, f"/api/v1/chat/messages/{message_id}").json()
        assert seen["status"] == "failed", seen
        nxt = chat(person, b, "还在吗", conversation_id=conversation_id)
        assert nxt.status_code == 200 and nxt.json()["reply"] == "在的。", nxt.text


def proposing_deliveries(slow):
    """A model that proposes a delivery when asked to take one in, and takes its time otherwise."""

    def behaviour(body: dict) -> Reply:
        last = body["input"]["messages"][-1]
        if last["role"] == "user" and "收货" in (last.get("content") or ""):
            return Reply(tool_calls=[tool_call("record_stock_movement", DELIVERY)])
        return slow(body)

    return behaviour


def approve_on(host, person, message_id) -> None:
    with contextlib.suppress(requests.RequestException):  # its host dies under it
        requests.post(
            f"{host.base}/api/v1/chat/messages/{message_id}/decision",
            json={"decision": "approve"},
            headers=person.headers(),
            timeout=180,
        )


def test_a_host_killed_with_twenty_answers_running_is_cleaned_up_by_the_other(site, model):
    a, b = site.a, site.b
    slow = model.slow()

    model.answers(proposing_deliveries(slow))
    bookers = [site.person(log_in_on=a) for _ in range(ANSWERS // 4)]
    askers = [site.person(log_in_on=a) for _ in range(ANSWERS // 4)]
    before = m005_in_main(site)

    # Half: bookings proposed on a, then approved there. The booking is made, then the model is
    # asked to say so, and takes its time: the approval's answer is `running`, its booking done.
    answers: list[tuple[object, str, str]] = []  # (person, message id, conversation id)
    approvals: list[tuple[object, str, str]] = []  # (person, message id, tool call id)
    for person in bookers * 2:
        body = chat(person, a, "收货 10 公斤 M005").json()
        assert body["status"] == "awaiting_confirmation", body
        approvals.append((person, body["message_id"], body["pending"][0]["tool_call_id"]))
        answers.append((person, body["message_id"], body["conversation_id"]))

    cut_off = [threading.Thread(target=approve_on, args=(a, p, m), daemon=True) for p, m, _ in approvals]
    for t in cut_off:
        t.start()
    # The other half: questions on a whose model takes its time, streamed as the page asks them.
    streams = []
    for person in askers * 2:
        stream = EventStream(person.post(a, "/api/v1/chat", json={"message": "慢慢讲"}, headers={"Accept": "text/event-stream"}, stream=True, timeout=180))  # fmt: skip
        started = stream.start()  # the page reads on: its connection stays open until the host dies
        streams.append(stream)
        answers.append((person, started["message_id"], started["conversation_id"]))

    deadline = time.monotonic() + 120
    while model.waiting < ANSWERS and time.monotonic() < deadline:
        time.sleep(0.2)
    assert model.waiting == ANSWERS, f"{model.waiting} of {ANSWERS} answers reached the model"
    ids = [message_id for _, message_id, _ in answers]
    assert sorted(running(site, ids)) == sorted(ids)

    a.kill()
    killed_at = time.monotonic()
    try:
        model.answers(Reply(content="在的。"))
        model.released.set()  # the stub lets go of the dead host's calls
        while running(site, ids) and time.monotonic() - killed_at < CRASH_ENDS_WITHIN:
            time.sleep(1)
        ended_after = time.monotonic() - killed_at
        left = running(site, ids)
        assert not left, f"{len(left)} answers still running {ended_after:.0f} s after their host died"
        ended = site.sql("SELECT status, error_code FROM messages WHERE id = ANY(%(ids)s)", ids=ids)
        assert sorted(ended) == [("failed", "interrupted")] * ANSWERS
        assert site.sql("SELECT count(*) FROM messages WHERE status = 'running'") == [(0,)]

        each_approved_booking_is_in_the_ledger_once(site, b, approvals)
        assert m005_in_main(site) == before + 10 * len(approvals)
        each_conversation_goes_on(b, answers)
    finally:
        for stream in streams:
            stream.close()
        for t in cut_off:
            t.join(timeout=30)
        a.start()  # host a again, for whatever runs after this
