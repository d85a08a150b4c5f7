"""A large booking crosses hosts on its way: proposed on one, approved by its requester on the
other, signed off by a manager on the first, and booked once. Decisions are session logins (the
page's way), and the same decision sent to both hosts at once is taken exactly once."""

from __future__ import annotations

import threading
from decimal import Decimal

from tests.support.hosts import chat

# 1000 kg of M001 at CNY 6.20: 6,200, over the sign-off value of 5,000.
BIG_DELIVERY = {
    "material": "M001",
    "warehouse": "主仓库",
    "movement_type": "inbound",
    "quantity": 1000,
    "unit": "kg",
    "reason": "到货 PO-HOSTS",
}


def level(site) -> Decimal:
    [(quantity,)] = site.sql(
        "SELECT l.quantity FROM stock_levels l JOIN materials m ON m.id = l.material_id "
        "JOIN warehouses w ON w.id = l.warehouse_id WHERE m.code = 'M001' AND w.code = 'WH01'"
    )
    return quantity


def in_ledger(site, call_id: str) -> int:
    [(count,)] = site.sql(
        "SELECT count(*) FROM stock_movements WHERE idempotency_key = %(key)s", key=f"chat:{call_id}"
    )
    return count


def at_once(*sends) -> list:
    """Each send in a thread of its own, released together; their responses, in order."""
    start, responses = threading.Barrier(len(sends)), [None] * len(sends)

    def run(n, send):
        start.wait()
        responses[n] = send()

    threads = [threading.Thread(target=run, args=(n, s)) for n, s in enumerate(sends)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return responses


def proposed(site, staff, host) -> tuple[dict, str]:
    asked = chat(staff, host, "收货 1000 公斤高筋面粉")
    body = asked.json()
    assert body["status"] == "awaiting_confirmation", body
    [pending] = body["pending"]
    return body, pending["tool_call_id"]


def test_a_booking_proposed_on_a_approved_on_b_and_signed_off_on_a_is_booked_once(site, model):
    a, b = site.a, site.b
    model.answers(model.calls("record_stock_movement", BIG_DELIVERY, then="已入库。"))
    staff = site.person(log_in_on=a)
    manager = site.person("warehouse_manager", log_in_on=a)
    before = level(site)

    asked, call_id = proposed(site, staff, a)
    decision = f"/api/v1/chat/messages/{asked['message_id']}/decision"
    approved = staff.post(b, decision, json={"decision": "approve"})
    assert approved.status_code == 200 and approved.json()["status"] == "awaiting_signoff", approved.text
    assert staff.post(a, decision, json={"decision": "approve"}).status_code == 409  # decided, on b
    assert level(site) == before and in_ledger(site, call_id) == 0

    [waiting] = manager.get(a, "/api/v1/approvals").json()
    assert waiting["tool_call_id"] == call_id and waiting["requested_by"] == staff.username
    signed = manager.post(a, f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"})
    assert signed.status_code == 200, signed.text
    assert signed.json()["result"]["status"] == "success" and signed.json()["answer_status"] == "completed"
    late = manager.post(b, f"/api/v1/approvals/{call_id}/decision", json={"decision": "approve"})
    assert late.status_code == 409, late.text

    assert in_ledger(site, call_id) == 1 and level(site) == before + 1000
    answer = staff.get(b, f"/api/v1/chat/messages/{asked['message_id']}").json()
    assert answer["status"] == "completed" and answer["reply"] == "已入库。"
    assert manager.get(b, "/api/v1/approvals").json() == []


def test_the_same_decisions_sent_to_both_hosts_at_once_are_each_taken_once(site, model):
    a, b = site.a, site.b
    model.answers(model.calls("record_stock_movement", BIG_DELIVERY, then="已入库。"))
    staff = site.person(log_in_on=b)
    managers = [site.person("warehouse_manager", log_in_on=host) for host in (a, b)]
    before = level(site)

    asked, call_id = proposed(site, staff, b)
    decision = f"/api/v1/chat/messages/{asked['message_id']}/decision"
    approvals = at_once(*[lambda h=h: staff.post(h, decision, json={"decision": "approve"}) for h in (a, b)])
    assert sorted(r.status_code for r in approvals) == [200, 409], [r.text for r in approvals]

    signoff = f"/api/v1/approvals/{call_id}/decision"
    signed = at_once(*[lambda m=m, h=h: m.post(h, signoff, json={"decision": "approve"}) for m, h in zip(managers, (a, b), strict=True)])  # fmt: skip
    assert sorted(r.status_code for r in signed) == [200, 409], [r.text for r in signed]
    assert in_ledger(site, call_id) == 1 and level(site) == before + 1000
