"""The staff pages in a real browser (tests/support/browser.py): Debian's chromium driven by Playwright,
against one live server per module on a seeded database with the offline provider. `make
screenshots` refreshes docs/screenshots/.

Tests share the server and its database, so each works with changes relative to what it finds, and a
test that needs a clean slate (a language choice, a sign-off) uses a user of its own."""

from __future__ import annotations

import os
import re
import time

from playwright.sync_api import expect
from sqlalchemy import func, select

from inventory_ai.assistant.extension import EXTENSION_KEY
from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.extensions import db
from inventory_ai.models import Conversation, ToolCallRecord, ToolRound, User
from tests.support.browser import (
    BROWSER_TESTS,
    CONVERSATION_URL,
    DOC_SCREENSHOTS,
    ask,
    finished_answer,
    log_in,
    message_status,
    open_page,
    serving,
    stock,
)
from tests.support.scripted import ScriptedProvider, answer

pytestmark = BROWSER_TESTS


# --- answers: tables, the reply, heights ------------------------------------------------------------


def test_search_shows_a_table_once_and_every_row_on_request(page, live):
    log_in(page, live.url)
    ask(page, "帮我查找面粉原料")
    answer = finished_answer(page)
    assert answer.locator(".chip.success").first.inner_text() == "✓ 搜索原料 · 13 条结果"
    rows = answer.locator("table.results tbody tr")
    expect(rows).to_have_count(10)
    assert rows.first.locator("td").all_inner_texts() == ["M001", "高筋面粉", "100", "kg", "主仓库"]
    assert "找到 13 种" in answer.locator(".reply").inner_text()
    page.wait_for_url(CONVERSATION_URL)  # the conversation has its own address now
    expect(page.get_by_label("消息")).to_be_focused()  # focus is back in the input
    answer.get_by_role("link", name="显示全部 13 条").click()
    expect(answer.locator("table.results tbody tr")).to_have_count(13)
    expect(answer.get_by_role("link", name=re.compile("显示全部"))).to_have_count(0)


def test_a_reply_in_markdown_shows_as_a_table_and_a_list_not_pipes(page, live, models):
    """How Qwen writes a report (format_report's Markdown, lists): read as a table, never as |."""
    reply = "### 低库存报表\n\n| 编码 | 名称 | 数量 |\n| --- | --- | --- |\n| M136 | 可可液块 | 2.6 |\n\n- 先补 **可可液块**\n- 再补奶粉"
    models(lambda _session: (ScriptedProvider(answer(reply)),))
    log_in(page, live.url)
    ask(page, "生成低库存报表")
    shown = finished_answer(page).locator(".reply")
    assert shown.locator("table tbody tr td").all_inner_texts() == ["M136", "可可液块", "2.6"]
    assert shown.locator("li").count() == 2 and shown.locator("li strong").inner_text() == "可可液块"
    assert "|" not in shown.inner_text() and "**" not in shown.inner_text()


def test_a_report_answer_shows_the_report_as_a_table(page, live):
    log_in(page, live.url)
    ask(page, "生成低库存报表")
    answer = finished_answer(page)
    report = answer.locator("figure.report")
    expect(report.locator("table tbody tr")).to_have_count(10)
    assert "|" not in report.inner_text()
    assert answer.locator("table").count() == 1  # the rows it was made from are not drawn twice


def test_a_reloaded_conversation_is_no_taller_than_it_was_live(page, live):
    log_in(page, live.url)
    for question in ("帮我查找面粉原料", "哪些原料库存不足？", "M001 详情"):
        ask(page, question)
        finished_answer(page)
        expect(page.get_by_label("消息")).to_be_editable()
    expect(page.locator(".msg.assistant")).to_have_count(3)
    live_height = page.locator("#transcript").bounding_box()["height"]
    page.reload()
    expect(page.locator(".msg.assistant")).to_have_count(3)
    reloaded = page.locator("#transcript").bounding_box()["height"]
    assert reloaded <= live_height + 1, (live_height, reloaded)
    # the collapsed tool line is one line, not a box of blank space
    assert page.locator("details.rounds").first.bounding_box()["height"] < 48


def test_a_material_detail_shows_its_stock_over_time(page, live):
    log_in(page, live.url)
    ask(page, "M001 详情")
    chart = finished_answer(page).locator("svg.chart.stock-line")
    expect(chart).to_be_visible()
    assert chart.get_attribute("role") == "img" and "M001" in chart.get_attribute("aria-label")
    assert chart.locator("path.line").get_attribute("d").count("L") > 10  # months of movements


# --- bookings: the thread, the card, larger than the stock -------------------------------------------


def test_a_booking_that_starts_a_conversation_keeps_its_thread(page, live):
    log_in(page, live.url)
    ask(page, "高筋面粉出库2公斤")
    card = page.locator(".confirm")
    expect(card).to_be_visible()
    page.wait_for_url(CONVERSATION_URL)  # known from the stream's start, before any `done`
    conversation = page.url
    expect(page.locator("#conversation-list li.current")).to_have_count(1)
    page.reload()
    expect(page.locator(".confirm")).to_be_visible()  # the card is in this conversation
    page.locator(".confirm").get_by_role("button", name="确认").click()
    expect(finished_answer(page)).to_have_attribute("data-status", "completed")
    ask(page, "帮我查找面粉原料")
    finished_answer(page)
    assert page.url == conversation
    with live.app.app_context():
        first = db.session.get(Conversation, conversation.rsplit("/", 1)[1])
        assert len(first.messages) == 4  # both questions and both answers in one conversation


def test_a_booking_can_be_edited_before_it_is_approved(page, live):
    before = stock(live.app)
    log_in(page, live.url)
    ask(page, "高筋面粉出库20公斤")
    card = page.locator(".confirm")
    assert "出库 20 kg 高筋面粉 (M001)，主仓库" in card.inner_text()
    assert stock(live.app) == before  # nothing is booked before the approval
    quantity = card.get_by_label("数量 (kg)")
    expect(quantity).to_have_value("20")
    quantity.fill("18")
    card.get_by_role("button", name="确认").click()
    answer = page.locator(".msg.assistant").last
    expect(answer).to_have_attribute("data-status", "completed")
    expect(answer.locator(".note.changed")).to_have_text("按修改确认：数量 20 → 18")
    assert page.locator(".confirm").count() == 0
    assert stock(live.app) == before - 18


def test_rejecting_a_booking_with_a_reason_books_nothing_and_keeps_the_reason(page, live):
    before = stock(live.app)
    log_in(page, live.url)
    ask(page, "高筋面粉出库5公斤")
    card = page.locator(".confirm")
    card.get_by_label("原因（可选）").fill("数量记错了")
    card.get_by_role("button", name="拒绝").click()
    answer = page.locator(".msg.assistant").last
    expect(answer).to_have_attribute("data-status", "completed")
    expect(answer.locator(".chip.declined")).to_have_count(1)
    expect(answer.locator(".note.reason")).to_have_text("拒绝原因：数量记错了")
    assert stock(live.app) == before
    with live.app.app_context():
        assert (
            db.session.scalar(select(func.count()).where(ToolCallRecord.decision_reason == "数量记错了")) == 1
        )


def test_a_booking_larger_than_the_stock_gets_no_card_and_says_what_is_on_hand(page, live):
    log_in(page, live.url)
    ask(page, "高筋面粉出库5000公斤")
    answer = finished_answer(page)
    expect(answer.locator(".reply")).to_contain_text(f"现有高筋面粉 (M001) {stock(live.app):.0f} kg")
    assert page.locator(".confirm").count() == 0


# --- running, stopping, the model that answered --------------------------------------------------


def test_a_running_tool_shows_a_spinner_and_esc_stops_as_a_neutral_state(page, live, slow_stats):
    log_in(page, live.url)
    ask(page, "库存统计")
    running = page.locator(".chip.running")
    expect(running).to_be_visible()
    assert "⏳" not in running.inner_text()  # the installed font has no such glyph: an empty box
    expect(running.locator(".spinner")).to_be_visible()
    expect(page.locator("[aria-live]").filter(has=running)).to_have_count(1)
    message_id = page.locator(".msg.assistant").last.get_attribute("data-message-id")
    with page.expect_response(lambda r: r.url.endswith("/cancel")) as stop:
        page.keyboard.press("Escape")
    assert stop.value.ok
    answer = page.locator(".msg.assistant").last
    expect(answer.locator(".note.stopped")).to_have_text("已停止")
    assert answer.locator(".error, [role=alert]").count() == 0  # stopped is not an error
    expect(page.get_by_role("button", name="停止")).to_be_hidden()
    slow_stats.set()
    for _ in range(100):  # the server ends it at its next safe point
        if message_status(live.app, message_id) == "cancelled":
            break
        time.sleep(0.05)
    page.reload()
    stopped = page.locator(f'.msg.assistant[data-message-id="{message_id}"]')
    expect(stopped.locator(".note.stopped")).to_have_text("已停止")  # not an empty box


class FailingQwen:
    name, model, costs_tokens = "dashscope", "qwen-plus", True

    def stream(self, request):
        raise ProviderError("the model is down", code="service_unavailable")


def test_an_answer_from_a_fallback_model_says_so_quietly(page, live, models):
    offline = live.app.extensions[EXTENSION_KEY].models.provider_factory
    models(lambda session: (FailingQwen(), *offline(session)), provider="dashscope")
    log_in(page, live.url)
    ask(page, "哪些原料库存不足？")
    note = finished_answer(page).locator(".note.model")
    expect(note).to_have_text("此回答由 offline 提供（qwen-plus 暂不可用）")
    page.reload()
    expect(page.locator(".msg.assistant").last.locator(".note.model")).to_be_visible()


# --- the page around the answers -----------------------------------------------------------------


def test_the_sidebar_lists_a_new_conversation_at_once_with_its_date_and_stays_in_view(page, live):
    log_in(page, live.url)
    ask(page, "帮我查找面粉原料")
    finished_answer(page)
    newest = page.locator("#conversation-list li").first
    expect(newest).to_have_class("current")
    expect(newest.locator(".title")).to_have_text("查找面粉原料")  # a short summary of the question
    expect(page.locator("#conversation-list h3.day").first).to_have_text("今天")  # grouped by day
    expect(newest.locator("time")).to_have_text(re.compile(r"^\d\d:\d\d$"))
    ask(page, "哪些原料库存不足？")
    finished_answer(page)
    page.mouse.wheel(0, 5000)
    # Polled from here: wait_for_function polls by evaluating a string in the page, which the page's
    # CSP (no 'unsafe-eval') refuses whenever the scroll has not happened by the first look.
    for _ in range(50):
        if page.evaluate("window.scrollY") > 0:
            break
        page.wait_for_timeout(100)
    assert page.evaluate("window.scrollY") > 0
    assert page.locator(".sidebar-inner").bounding_box()["y"] >= -1  # sticky: still in view
    page.reload()
    expect(page.locator("#conversation-list li.current time")).to_have_text(re.compile(r"^\d\d:\d\d$"))


def test_quick_actions_ask_the_common_things_in_the_users_language_and_role(page, browser, live):
    log_in(page, live.url)
    quick = page.get_by_role("group", name="常用操作")
    quick.get_by_role("button", name="库存不足").click()
    expect(finished_answer(page).locator("table.results tbody tr")).to_have_count(10)
    quick.get_by_role("button", name="出库").click()
    box = page.get_by_label("消息")
    expect(box).to_be_focused()
    expect(box).to_have_value("出库 ")
    purchaser = open_page(browser)
    log_in(purchaser, live.url, "purchaser")  # purchasers book nothing
    actions = purchaser.get_by_role("group", name="常用操作").get_by_role("button").all_inner_texts()
    assert "库存不足" in actions and "出库" not in actions and "入库" not in actions
    purchaser.context.close()


def test_the_language_switch_is_stored_per_user_and_applies_to_names_and_replies(browser, live, new_user):
    name = new_user()
    page = open_page(browser, locale="zh-CN")
    log_in(page, live.url, name)
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    expect(page.get_by_role("button", name="English")).to_have_attribute("aria-pressed", "true")
    ask(page, "find flour")
    answer = finished_answer(page)
    first = answer.locator("table.results tbody tr").first.locator("td").all_inner_texts()
    assert first[:2] == ["M001", "Bread Flour"] and first[3:] == ["kg", "Main Warehouse"]
    assert answer.locator(".chip.success").first.inner_text().startswith("✓ Material search")
    ask(page, "高筋面粉出库1公斤")  # asked in Chinese, answered in the chosen language
    expect(page.locator(".confirm .description")).to_have_text(
        "Book out 1 kg Bread Flour (M001) in Main Warehouse"
    )
    page.context.close()
    again = open_page(browser, locale="zh-CN")  # a new login, a Chinese browser: still English
    log_in(again, live.url, name)
    expect(again.get_by_role("button", name="Send")).to_be_visible()
    assert again.locator("html").get_attribute("lang") == "en"
    again.context.close()


def test_keyboard_and_screen_reader_basics(page, live):
    log_in(page, live.url)
    expect(page.get_by_label("消息")).to_be_visible()
    expect(page.get_by_role("group", name="语言 Language").get_by_role("button")).to_have_count(2)
    page.keyboard.press("Tab")
    focused = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert focused not in ("none", ""), "the focused control must show it"
    expect(page.locator("#transcript")).to_have_attribute("aria-live", "polite")


def test_pages_load_cleanly_and_another_users_conversation_is_404(page, browser, live):
    live.refused.clear()
    log_in(page, live.url)
    ask(page, "what is running low?")
    finished_answer(page)
    mine = page.url
    page.reload()
    expect(page.locator("table.results tbody tr")).to_have_count(10)
    expect(page.locator("#conversation-list li.current")).to_have_count(1)
    page.goto(f"{live.url}/overview")
    page.wait_for_load_state("networkidle")
    assert live.refused == []  # favicon included
    other = open_page(browser)
    log_in(other, live.url, "manager")
    assert other.goto(mine).status == 404
    other.context.close()


def test_without_javascript_the_forms_still_ask_and_book(browser, live):
    context = browser.new_context(locale="zh-CN", java_script_enabled=False)
    page = context.new_page()
    before = stock(live.app)
    log_in(page, live.url)
    expect(page.get_by_role("group", name="常用操作")).to_be_hidden()  # they need the script
    page.get_by_label("消息").fill("高筋面粉出库1公斤")
    page.get_by_role("button", name="发送").click()
    card = page.locator(".confirm")
    card.get_by_label("数量 (kg)").fill("2")
    card.get_by_role("button", name="确认").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    assert stock(live.app) == before - 2
    context.close()


def test_english_login_and_log_out(browser, live):
    page = open_page(browser, locale="en-US")
    log_in(page, live.url)
    page.get_by_role("button", name=re.compile("Log out")).click()
    page.wait_for_url(f"{live.url}/login")
    assert page.goto(f"{live.url}/").url.startswith(f"{live.url}/login")
    page.context.close()


# --- overview and sign-off -----------------------------------------------------------------------


def test_the_overview_shows_value_charts_low_stock_and_todays_movements(page, live):
    log_in(page, live.url, "manager")
    ask(page, "高筋面粉入库3公斤")
    page.locator(".confirm").get_by_role("button", name="确认").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    page.get_by_role("link", name="库存概览").click()
    expect(page.get_by_role("heading", name="库存概览", level=1)).to_be_visible()
    by_warehouse = page.get_by_role("img", name="各仓库库存金额")
    expect(by_warehouse.locator("rect.bar")).to_have_count(3)
    expect(page.get_by_role("img", name="各类别库存金额").locator("rect.bar")).not_to_have_count(0)
    low = page.get_by_role("region", name="低于补货点")
    expect(low.locator("tbody tr").first).to_be_visible()
    today = page.get_by_role("region", name="今天的出入库")
    expect(today.locator("tbody tr").filter(has_text="高筋面粉").first).to_contain_text("入库")


def test_a_large_booking_waits_for_a_managers_sign_off_on_the_approvals_page(browser, live, new_user):
    requester = new_user()
    before = stock(live.app)
    staff = open_page(browser)
    staff.add_init_script("window.inventoryPollMs = 300")  # the page asks how it stands every 15 s
    log_in(staff, live.url, requester)
    ask(staff, "高筋面粉入库1000公斤")  # 6,200 CNY: more than the 5,000 a requester may book alone
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    waiting = staff.locator(".msg.assistant").last
    expect(waiting).to_have_attribute("data-status", "awaiting_signoff")
    expect(waiting.locator(".note.signoff")).to_be_visible()
    assert staff.request.get(f"{live.url}/approvals").status == 403  # staff sign off nothing
    manager = open_page(browser)
    log_in(manager, live.url, "manager")
    manager.get_by_role("link", name=re.compile("待签核")).click()
    item = manager.locator(".signoff").filter(has_text=requester)
    expect(item).to_contain_text("入库 1,000 kg 高筋面粉 (M001)，主仓库")
    expect(item).to_contain_text("6,200.00")
    item.get_by_label("原因（可选）").fill("月底备货")
    item.get_by_role("button", name="批准").click()
    expect(manager.locator(".flash")).to_contain_text("已批准")
    expect(manager.locator(".signoff").filter(has_text=requester)).to_have_count(0)
    assert stock(live.app) == before + 1000
    # The requester's page shows the outcome by itself, without a reload.
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    manager.context.close()
    staff.context.close()


def test_the_requesters_page_follows_a_sign_off_it_catches_half_way(browser, live, new_user):
    """The page may ask just when a manager's decision has started (the answer reads "running");
    it keeps asking until the answer has ended instead of showing "still answering" for good."""
    from inventory_ai.assistant.extension import decisions

    requester = new_user()
    staff = open_page(browser)
    staff.add_init_script("window.inventoryPollMs = 200")
    log_in(staff, live.url, requester)
    ask(staff, "高筋面粉入库1000公斤")
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    waiting = staff.locator(".msg.assistant").last
    expect(waiting).to_have_attribute("data-status", "awaiting_signoff")
    message_id = waiting.get_attribute("data-message-id")
    with live.app.app_context():
        signer = db.session.scalar(select(User).where(User.username == "manager"))
        call_id = db.session.scalar(
            select(ToolCallRecord.call_id)
            .join(ToolRound)
            .where(ToolRound.message_id == message_id, ToolCallRecord.status == "awaiting_signoff")
        )
        decision = decisions().prepare_signoff(db.session, signer, call_id, True)  # claimed: running
        expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "running")
        for _event in decisions().decide(db.session, decision):
            pass
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    staff.context.close()


# --- screenshots for the docs --------------------------------------------------------------------


def test_screenshots_for_the_docs(browser, databases, tmp_path):
    """docs/screenshots, from a database just seeded: desktop (1366x900), tablet (820x1180) and phone
    (390x844) sizes of one conversation (the navigation behind its menu button, and the menu open),
    a confirmation card, the sign-off page and the overview."""
    shots = DOC_SCREENSHOTS if os.environ.get("INVENTORY_AI_SCREENSHOTS") == "docs" else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    with serving(databases, tmp_path) as fresh:
        page = open_page(browser)
        log_in(page, fresh.url)
        for question in ("帮我查找面粉原料", "M001 详情"):
            ask(page, question)
            finished_answer(page)
        page.screenshot(path=str(shots / "chat-desktop.png"))
        conversation = page.url
        for name, width, height in (("chat-tablet", 820, 1180), ("chat-phone", 390, 844)):
            narrow = open_page(browser, width=width, height=height)
            log_in(narrow, fresh.url)
            narrow.goto(conversation)
            expect(narrow.locator(".msg.assistant")).to_have_count(2)
            assert narrow.evaluate("document.documentElement.scrollWidth") <= width  # nothing wider
            expect(narrow.locator("#sidebar")).to_be_hidden()  # behind the menu button
            narrow.wait_for_timeout(300)  # the page has landed at the latest message
            narrow.screenshot(path=str(shots / f"{name}.png"))
            narrow.get_by_role("button", name="菜单").click()
            expect(narrow.locator("#sidebar")).to_be_visible()
            narrow.screenshot(path=str(shots / f"{name}-menu.png"))
            narrow.context.close()
        page.get_by_role("link", name="新对话").click()
        ask(page, "高筋面粉出库20公斤")
        card = page.locator(".confirm")
        card.get_by_label("数量 (kg)").fill("18")
        card.get_by_label("原因（可选）").fill("秤上只有18公斤")
        page.locator(".msg.assistant").last.screenshot(path=str(shots / "confirmation.png"))
        card.get_by_role("button", name="确认").click()
        expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
        page.get_by_role("link", name="新对话").click()
        ask(page, "高筋面粉入库1000公斤")
        page.locator(".confirm").get_by_role("button", name="确认").click()
        expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
        manager = open_page(browser)
        log_in(manager, fresh.url, "manager")
        manager.goto(f"{fresh.url}/approvals")
        manager.locator(".signoff").first.get_by_label("原因（可选）").fill("月底备货")
        manager.screenshot(path=str(shots / "approvals.png"))
        manager.get_by_role("button", name="批准").click()
        expect(manager.locator(".flash")).to_contain_text("已批准")
        manager.goto(f"{fresh.url}/overview")
        manager.screenshot(path=str(shots / "overview.png"), full_page=True)
        manager.context.close()
        page.context.close()
