"""The staff pages' server side, without a browser: what they answer, to whom, and how they draw
text, tables and charts (tests/web/test_browser.py drives the same pages in chromium)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import func, select

from inventory_ai.models import ChatMessage, Material, StockLevel, utcnow
from inventory_ai.services.sites import ALL
from inventory_ai.services.stats import stock_history
from inventory_ai.web import charts
from inventory_ai.web.markup import render
from tests.support.clients import AuthActions


def m001(session) -> Decimal:
    session.expire_all()
    return session.scalar(select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == "M001"))


# --- the browser's small asks ----------------------------------------------------------------------


def test_the_favicon_is_served_and_linked(client):
    with client.get("/favicon.ico") as icon:
        assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert 'rel="icon"' in client.get("/login").get_data(as_text=True)


def test_retry_after_is_only_on_refusals(app, client, auth):
    app.config["CHAT_RATE_LIMIT"] = "2 per minute"
    auth.login("staff")
    answered = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"})
    streamed = client.post(
        "/api/v1/chat", json={"message": "哪些原料库存不足？"}, headers={"Accept": "text/event-stream"}
    )
    assert streamed.get_data(as_text=True).startswith("event: start\n")  # read to its end first
    for response in (answered, streamed):
        assert response.status_code == 200 and "Retry-After" not in response.headers
        assert "X-RateLimit-Remaining" in response.headers  # the limit's own headers stay
    refused = client.post("/api/v1/chat", json={"message": "hi"})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0


# --- the language -------------------------------------------------------------------------------


def test_the_chosen_language_is_kept_for_the_page_and_the_answer_follows_the_question(
    client, auth, session, user
):
    auth.login("staff")
    assert client.post("/language", data={"language": "fr"}).status_code == 400
    assert client.post("/language", data={"language": ["zh", "en"][1]}).status_code == 302
    assert user("staff").language == "en"
    page = client.get("/", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert '<html lang="en">' in page and ">Send<" in page
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json  # asked in Chinese
    assert session.get(ChatMessage, asked["message_id"]).language == "zh"  # answered in Chinese
    assert asked["pending"][0]["description"] == "出库 20 kg 高筋面粉 (M001)，主仓库"
    # The page's card is written for its English reader, whatever the question's language.
    drawn = client.get(f"/messages/{asked['message_id']}").get_data(as_text=True)
    card = drawn[drawn.index('<form class="confirm"') :]
    assert "Book out 20 kg Bread Flour (M001) in Main Warehouse" in card and "高筋面粉" not in card


def test_without_a_choice_the_question_decides_the_answers_language(client, auth, session):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    assert asked["pending"][0]["description"] == "出库 20 kg 高筋面粉 (M001)，主仓库"


# --- answers as the page draws them ---------------------------------------------------------------


def test_an_answer_is_drawn_for_its_owner_only(app_with, client, auth):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json
    drawn = client.get(f"/messages/{asked['message_id']}").get_data(as_text=True)
    assert 'data-status="completed"' in drawn and "✓ 搜索原料 · 13 条结果" in drawn
    assert drawn.count("<tr>") == 11 and "显示全部 13 条" in drawn  # header + 10 rows, and the rest on ask
    call_id = asked["rounds"][0]["tool_calls"][0]["id"]
    every = client.get(f"/calls/{call_id}/all", headers={"X-Requested-With": "fetch"}).get_data(as_text=True)
    assert every.count("<tr>") == 14 and "显示全部" not in every
    without_script = client.get(f"/calls/{call_id}/all").get_data(as_text=True)  # a page of its own
    assert without_script.count("<tr>") == 14 and f'href="/c/{asked["conversation_id"]}"' in without_script
    auth.logout()
    auth.login("manager")
    assert client.get(f"/messages/{asked['message_id']}").status_code == 404
    assert client.get(f"/calls/{call_id}/all").status_code == 404
    assert client.get("/calls/call_nonexistent/all").status_code == 404


def test_a_card_edited_without_javascript_books_the_edited_quantity(client, auth, session):
    auth.login("staff")
    before = m001(session)
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    url = f"/messages/{asked['message_id']}/decision"
    card = {"tool_call_id": asked["pending"][0]["tool_call_id"], "asked_quantity": "20"}
    assert client.post(url, data={**card, "decision": "maybe"}).status_code == 400
    not_a_number = client.post(url, data={**card, "decision": "approve", "quantity": "twenty"})
    assert not_a_number.status_code == 302 and m001(session) == before  # said so, booked nothing
    done = client.post(url, data={**card, "decision": "approve", "quantity": "18", "reason": "秤上只有18"})
    assert done.status_code == 302 and m001(session) == before - 18
    page = client.get(done.headers["Location"]).get_data(as_text=True)
    assert "按修改确认：数量 20 → 18" in page and "确认备注：秤上只有18" in page


# --- sign-off and the overview ----------------------------------------------------------------------


def test_the_approvals_page_is_for_managers_and_admins(client, auth):
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉入库1000公斤"}).json
    client.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"})
    assert client.get("/approvals").status_code == 403
    call_id = asked["pending"][0]["tool_call_id"]
    assert client.post(f"/approvals/{call_id}/decision", data={"decision": "approve"}).status_code == 403
    auth.logout()
    auth.login("manager")
    page = client.get("/approvals").get_data(as_text=True)
    assert "入库 1,000 kg 高筋面粉 (M001)，主仓库" in page and "6,200.00" in page
    assert client.get("/").get_data(as_text=True).count('class="badge">1<') == 1
    unclear = client.post(f"/approvals/{call_id}/decision", data={"decision": "maybe"})
    assert unclear.status_code == 400  # a decision is never assumed (tests/web/test_decisions_deliberate.py)
    rejected = client.post(f"/approvals/{call_id}/decision", data={"decision": "reject", "reason": "不需要"})
    assert rejected.status_code == 302
    after = client.get("/approvals").get_data(as_text=True)
    assert "已驳回：入库 1,000 kg 高筋面粉 (M001)，主仓库" in after and "6,200.00" not in after
    late = client.post(f"/approvals/{call_id}/decision", data={"decision": "approve"})
    assert late.status_code == 302
    assert '<div class="flash error" role="alert">this sign-off is rejected already' in client.get(
        "/approvals"
    ).get_data(as_text=True)


def test_the_overview_shows_what_the_users_tools_may_show(client, auth):
    auth.login("admin")
    page = client.get("/overview").get_data(as_text=True)
    assert "各仓库库存金额" in page and "低于补货点" in page and "今天的出入库" in page
    assert len(re.findall(r'<rect class="bar"', page)) >= 3 + 5  # three warehouses, the categories
    switched_off = client.patch("/api/v1/admin/tools/get_inventory_stats", json={"enabled": False})
    assert switched_off.status_code == 200
    page = client.get("/overview").get_data(as_text=True)
    assert "各仓库库存金额" not in page and "低于补货点" in page


# --- drawing: text, charts, the ledger behind the chart -------------------------------------------


def test_markdown_from_a_model_becomes_a_table_a_list_and_escaped_text():
    html = str(
        render(
            "**注意**：\n| 编码 | 名称 |\n|---|---|\n| M001 | 高筋<b>面粉</b> |\n\n- 一\n- `二`\n<script>x</script>"
        )
    )
    assert "<strong>注意</strong>" in html and "<td>M001</td>" in html
    assert "<td>高筋&lt;b&gt;面粉&lt;/b&gt;</td>" in html
    assert "<ul><li>一</li><li><code>二</code></li></ul>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html and "|" not in html
    assert str(render("第一行\n第二行")) == "<p>第一行<br>第二行</p>"
    assert str(render("")) == ""


def test_charts_are_svg_images_with_a_name_and_nothing_unescaped():
    start = datetime(2026, 1, 1)
    points = [
        (start, Decimal(10)),
        (start + timedelta(days=2), Decimal(40)),
        (start + timedelta(days=9), Decimal(5)),
    ]
    line = str(
        charts.stock_line(points, (Decimal(20), "补货点"), ("01-01", "01-10"), "M001 <近 9 天>", "从 10 到 5")
    )
    assert line.startswith('<svg class="chart stock-line"') and 'role="img"' in line
    assert 'aria-label="M001 &lt;近 9 天&gt;"' in line and ">补货点 20</text>" in line
    assert re.search(r'<path class="line" d="M[\d. ]+( L[\d. ]+){4}"', line)  # a step per movement
    bars = str(
        charts.bars([("主仓库", Decimal(300)), ("<冷库>", Decimal(100))], "各仓库", lambda v: f"{v} 元")
    )
    assert bars.count('<rect class="bar"') == 2 and "&lt;冷库&gt;" in bars


def test_stock_history_follows_the_ledger_to_the_moment_asked(client, auth, session):
    material = session.scalar(select(Material).where(Material.code == "M001"))
    now = utcnow()
    before = stock_history(session, material.id, now - timedelta(days=90), now, sites=ALL)
    assert before[-1][1] == m001(session) and len(before) > 5
    auth.login("staff")
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库20公斤"}).json
    client.post(f"/api/v1/chat/messages/{asked['message_id']}/decision", json={"decision": "approve"})
    later = utcnow() + timedelta(minutes=1)
    after = stock_history(session, material.id, now - timedelta(days=90), later, sites=ALL)
    assert after[-1][1] == before[-1][1] - 20
    assert (
        stock_history(session, material.id, now - timedelta(days=90), now, sites=ALL) == before
    )  # the past stays


def test_quick_actions_follow_the_role(client, auth):
    auth.login("purchaser")
    page = client.get("/").get_data(as_text=True)
    assert 'data-text="哪些原料库存不足？"' in page and 'data-text="出库 "' not in page


def test_a_streamed_decision_reads_on_in_a_request_context_of_its_own(app_with):
    """The page's approve streams. A real server keeps no app context beyond a request, so the
    stream reads on in a database session of its own; the `app` fixture keeps one context for the
    whole test, which hides the difference. This app runs as a server does."""
    client = app_with().test_client()
    AuthActions(client).login("staff")
    asked = client.post("/api/v1/chat", json={"message": "高筋面粉出库2公斤"}).json
    streamed = client.post(
        f"/api/v1/chat/messages/{asked['message_id']}/decision",
        json={"decision": "approve"},
        headers={"Accept": "text/event-stream"},
    ).get_data(as_text=True)
    assert "internal_error" not in streamed and '"status": "completed"' in streamed


def test_login_page_is_served(client):
    response = client.get("/login")
    assert response.status_code == 200
    assert "csrf_token" in response.get_data(as_text=True)
