"""What Qwen is sent while a booking waits for a manager's sign-off and the conversation goes on: over
HTTP with the real SDK, against the DashScope-protocol stub, which refuses (400, as DashScope does) a
message sequence where an assistant message's tool calls are not each answered by a tool message."""

from __future__ import annotations

import json

from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import Signoff
from tests.support.clients import AuthActions, approve, sign_off
from tests.support.dashscope_stub import Error, Reply, tool_call

BIG = {"material": "M001", "warehouse": "主仓库", "movement_type": "inbound", "quantity": 1000,
       "unit": "kg", "reason": "月底备货"}  # fmt: skip


def invalid(messages: list[dict]) -> str | None:
    """Why DashScope would refuse this sequence, or None."""
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            answered = [
                x.get("tool_call_id") for x in messages[i + 1 : i + 1 + len(ids)] if x["role"] == "tool"
            ]
            if answered != ids:
                return f"tool calls {ids} answered by {answered}"
        if m["role"] == "tool" and (i == 0 or messages[i - 1]["role"] not in ("assistant", "tool")):
            return "a tool message follows no tool call"
    return None


def warehouse_model(body: dict):
    messages = body["input"]["messages"]
    why = invalid(messages)
    if why is not None:
        return Error(400, "InvalidParameter", why)
    last = messages[-1]
    if last["role"] == "tool":
        return Reply(content="结果：" + last["content"][:200])
    if "入库" in last["content"]:
        return Reply(tool_calls=[tool_call("record_stock_movement", BIG)])
    return Reply(content="好的。")


def test_qwen_sees_a_valid_history_while_a_booking_waits_and_when_its_signoff_resumes_it(qwen_app, stub):
    app = qwen_app()
    stub.default = warehouse_model
    with app.app_context():
        staff = app.test_client()
        AuthActions(staff).login("staff")
        asked = staff.post("/api/v1/chat", json={"message": "收货入库 1000 公斤高筋面粉"}).json
        waiting = approve(staff, asked["message_id"]).json
        assert waiting["status"] == "awaiting_signoff", waiting
        conversation = waiting["conversation_id"]

        later = staff.post(
            "/api/v1/chat", json={"message": "库存够吗？", "conversation_id": conversation}
        ).json
        assert later["status"] == "completed" and later["reply"] == "好的。", later
        sent = stub.requests[-1]["input"]["messages"]
        [waiting_result] = [m for m in sent if m["role"] == "tool"]
        assert json.loads(waiting_result["content"])["status"] == "awaiting_signoff"
        assert any(m["role"] == "assistant" and "审批" in m["content"] for m in sent)  # it said it waits

        manager = app.test_client()
        AuthActions(manager).login("manager")
        call_id = waiting["rounds"][0]["tool_calls"][0]["id"]
        signed = sign_off(manager, call_id).json
        assert signed["answer_status"] == "completed", signed
        resumed = stub.requests[-1]["input"]["messages"]
        assert invalid(resumed) is None
        assert [m["content"] for m in resumed if m["role"] == "user"] == ["收货入库 1000 公斤高筋面粉"]
        assert resumed[-1]["role"] == "tool" and "level_after" in resumed[-1]["content"]

        after = staff.post("/api/v1/chat", json={"message": "谢谢", "conversation_id": conversation}).json
        assert after["status"] == "completed", after
        assert db.session.scalar(select(Signoff.status)) == "approved"
