"""One tool call from outside a chat (what the MCP server does): the same checks as in the loop,
and a booking waits for its user's approval in the web form or the API."""

from __future__ import annotations

import json
from decimal import Decimal

from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, ToolSetting
from tests.support.bookings import MCP_BOOKING as BOOKING
from tests.support.clients import AuthActions, approve, sign_off
from tests.support.factories import user_named
from tests.support.scripted import ScriptedProvider, use
from tests.support.stock import level


def test_a_read_returns_real_data_and_is_audited_as_from_mcp(app):
    result = manager().call_directly(db.session, user_named("staff"), "search_materials", {"keyword": "面粉"})
    assert result.status == "success"
    assert json.loads(result.content)["materials"][0]["code"] == "M001"
    event = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "tool_call")).all()[-1]
    assert event.detail == "source=mcp" and event.tool_name == "search_materials"


def test_a_name_the_database_cannot_keep_is_refused_and_audited_cleaned(app):
    # The stdio server has no HTTP door that refuses NUL: call_directly cleans what comes in.
    result = manager().call_directly(db.session, user_named("staff"), "search\x00mat\ud800", {})
    assert result.status == "error" and json.loads(result.content)["error"]["type"] == "PermissionDenied"
    db.session.expire_all()
    event = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "tool_call")).all()[-1]
    assert event.tool_name == "search\ufffdmat\ufffd" and event.detail == "source=mcp"


def test_a_tool_the_user_lacks_or_an_admin_switched_off_is_refused(app):
    staff = user_named("staff")
    refused = manager().call_directly(
        db.session, staff, "create_purchase_request", {"material": "M001", "quantity": 1}
    )
    assert refused.status == "error" and json.loads(refused.content)["error"]["type"] == "PermissionDenied"
    db.session.add(ToolSetting(tool_name="search_materials", enabled=False))
    db.session.commit()
    manager().registry.settings_changed()  # as the admin API does after its commit
    off = manager().call_directly(db.session, staff, "search_materials", {"keyword": "面粉"})
    assert json.loads(off.content)["error"]["type"] == "PermissionDenied"


def test_bad_arguments_list_every_error(app):
    result = manager().call_directly(
        db.session, user_named("staff"), "list_low_stock", {"limit": 0, "colour": "red"}
    )
    message = json.loads(result.content)["error"]["message"]
    assert result.status == "error" and "limit" in message and "colour" in message


def test_a_booking_waits_for_approval_then_is_booked_once_without_a_model(app, client):
    use(app, ScriptedProvider())  # any call to a model would fail this test
    result = manager().call_directly(db.session, user_named("staff"), "record_stock_movement", BOOKING)
    assert (
        result.status == "pending_confirmation"
        and json.loads(result.content)["status"] == "awaiting_approval"
    )
    assert level() == Decimal("100")

    AuthActions(client).login("staff")
    [waiting] = client.get("/api/v1/chat/pending").json
    assert waiting["tool_call_id"] == result.tool_call_id and waiting["source"] == "mcp"
    assert waiting["description"] == "出库 5 kg 高筋面粉 (M001)，主仓库"
    decided = approve(client, waiting["message_id"]).json
    assert decided["status"] == "completed" and decided["reply"].startswith("已完成：出库 5 kg")
    assert level() == Decimal("95")
    again = approve(client, waiting["message_id"])
    assert again.status_code == 409 and level() == Decimal("95")
    assert client.get("/api/v1/chat/pending").json == []


def test_a_large_booking_from_mcp_needs_a_signoff_like_any_other(app, client):
    use(app, ScriptedProvider())
    big = dict(BOOKING, movement_type="inbound", quantity=1000)
    result = manager().call_directly(db.session, user_named("staff"), "record_stock_movement", big)
    AuthActions(client).login("staff")
    decided = approve(client, result.message_id).json
    assert decided["status"] == "awaiting_signoff" and level() == Decimal("100")
    signer = app.test_client()
    AuthActions(signer).login("manager")
    signed = sign_off(signer, result.tool_call_id).json
    assert signed["answer_status"] == "completed" and level() == Decimal("1100")
