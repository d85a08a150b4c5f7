"""Conversations as a chat app keeps them: renamed, deleted (soft: the audit trail and admins keep
them), searched by text in titles and messages, and titled with a short summary of the question.
Only their owner may do any of it: another user's conversation is a 404, as a missing one is."""

from __future__ import annotations

from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, Conversation
from inventory_ai.services.conversations import title_for
from tests.support.clients import client_for
from tests.support.factories import ConversationFactory, user_named
from tests.support.scripted import ScriptedProvider, booking, call, calls, use


def asked(client, text: str, conversation_id: str | None = None) -> dict:
    response = client.post("/api/v1/chat", json={"message": text, "conversation_id": conversation_id})
    assert response.status_code == 200, response.json
    return response.json


def test_a_new_conversation_is_titled_with_what_its_question_is_about(app):
    staff = client_for(app, "staff")
    body = asked(staff, "帮我查找面粉原料")
    [listed] = [c for c in staff.get("/api/v1/conversations").json if c["id"] == body["conversation_id"]]
    assert listed["title"] == "查找面粉原料"  # not the question word for word
    long = "请帮我查一下M001的详情，然后告诉我最近一个月的出入库记录和库存变化情况，谢谢"
    assert title_for(long) == "查一下M001的详情…"
    assert title_for("can you please find flour, sugar and salt for the bakery line") == (
        "Find flour, sugar and salt for…"
    )
    assert title_for("what is running low?") == "What is running low"


def test_renaming_a_conversation_shows_in_the_list_and_is_refused_to_anyone_else(app):
    staff = client_for(app, "staff")
    conversation = ConversationFactory(user=user_named("staff")).id
    renamed = staff.patch(f"/api/v1/conversations/{conversation}", json={"title": "  月底 补货  "})
    assert renamed.status_code == 200 and renamed.json["title"] == "月底 补货"
    assert staff.get(f"/api/v1/conversations/{conversation}").json["title"] == "月底 补货"
    empty = staff.patch(f"/api/v1/conversations/{conversation}", json={"title": "   "})
    assert empty.status_code == 422 and "title" in str(empty.json["error"])
    manager = client_for(app, "manager")
    assert manager.patch(f"/api/v1/conversations/{conversation}", json={"title": "mine"}).status_code == 404
    assert manager.delete(f"/api/v1/conversations/{conversation}").status_code == 404
    assert staff.get(f"/api/v1/conversations/{conversation}").json["title"] == "月底 补货"


def test_a_deleted_conversation_is_gone_for_its_owner_and_kept_for_admins_and_the_audit(app):
    staff = client_for(app, "staff")
    body = asked(staff, "M001 详情")
    conversation = body["conversation_id"]
    assert staff.delete(f"/api/v1/conversations/{conversation}").status_code == 204
    assert conversation not in [c["id"] for c in staff.get("/api/v1/conversations").json]
    assert staff.get(f"/api/v1/conversations/{conversation}").status_code == 404
    assert staff.get(f"/api/v1/chat/messages/{body['message_id']}").status_code == 404
    assert staff.delete(f"/api/v1/conversations/{conversation}").status_code == 404
    follow_up = staff.post("/api/v1/chat", json={"message": "还有呢", "conversation_id": conversation})
    assert follow_up.status_code == 404
    assert conversation not in [c["id"] for c in staff.get("/api/v1/conversations?q=M001").json]

    admin = client_for(app, "admin")
    listed = admin.get("/api/v1/admin/conversations?user=staff&per_page=200").json["items"]
    [kept] = [c for c in listed if c["id"] == conversation]
    assert kept["deleted_at"] is not None
    whole = admin.get(f"/api/v1/admin/conversations/{conversation}").json
    assert whole["deleted_at"] is not None and len(whole["messages"]) == 2
    events = admin.get(f"/api/v1/admin/audit-events?conversation_id={conversation}").json["items"]
    assert "conversation_deleted" in [e["action"] for e in events]


def test_a_conversation_waiting_for_its_owners_decision_is_not_deleted_under_it(app):
    use(app, ScriptedProvider(calls(call("record_stock_movement", booking(5)))))
    staff = client_for(app, "staff")
    body = asked(staff, "出库 5 kg")
    assert body["status"] == "awaiting_confirmation"
    refused = staff.delete(f"/api/v1/conversations/{body['conversation_id']}")
    assert refused.status_code == 409
    assert db.session.get(Conversation, body["conversation_id"]).deleted_at is None


def test_search_finds_conversations_by_their_title_and_by_words_in_their_messages(app):
    mine = user_named("staff")
    almonds = ConversationFactory(
        user=mine, question="杏仁粉怎么样", answer="杏仁粉还有 12 kg，在二号仓库。"
    ).id
    today = ConversationFactory(user=mine, question="今天的库存变动", answer="今天没有出入库。").id
    rye = ConversationFactory(user=mine, question="rye flour?", answer="The 100% rye flour is M031.").id
    staff = client_for(app, "staff")
    staff.patch(f"/api/v1/conversations/{today}", json={"title": "Daily check"})

    def found(q: str) -> list[str]:
        response = staff.get("/api/v1/conversations", query_string={"q": q})
        assert response.status_code == 200
        return [c["id"] for c in response.json]

    assert found("二号仓库") == [almonds]  # a word only the answer has
    assert found("DAILY") == [today]  # the title, whatever the case
    assert found("100%") == [rye]  # % is a character here, not a wildcard
    assert found("_") == []
    assert found("no such words anywhere") == []
    [hit] = staff.get("/api/v1/conversations", query_string={"q": "二号"}).json
    assert "二号仓库" in hit["match"]
    assert client_for(app, "manager").get("/api/v1/conversations", query_string={"q": "二号仓库"}).json == []
    assert staff.get("/api/v1/conversations", query_string={"q": "x" * 201}).status_code == 422


def test_renames_are_audited(app):
    staff = client_for(app, "staff")
    conversation = ConversationFactory(user=user_named("staff"), question="库存统计").id
    staff.patch(f"/api/v1/conversations/{conversation}", json={"title": "统计"})
    actions = db.session.scalars(
        select(AuditEvent.action).where(AuditEvent.conversation_id == conversation)
    ).all()
    assert "conversation_renamed" in actions
