"""What people expect of a chat app, on the chat page: conversations renamed, deleted, searched and
grouped by day in the sidebar, titled with a short summary; a failed or stopped answer asked again;
the last question edited and sent again."""

from __future__ import annotations

import re
from datetime import UTC, timedelta

from playwright.sync_api import expect
from sqlalchemy import select

from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.extensions import db
from inventory_ai.models import Conversation, User, utcnow
from inventory_ai.services import clock
from tests.support.browser import BROWSER_TESTS, CONVERSATION_URL, ask, finished_answer, log_in, open_page
from tests.support.scripted import ScriptedProvider, answer

pytestmark = BROWSER_TESTS


def _new_conversation(page, question: str) -> str:
    page.get_by_role("link", name="新对话").first.click()
    ask(page, question)
    finished_answer(page)
    page.wait_for_url(CONVERSATION_URL)
    return page.url


def test_a_new_conversation_is_titled_with_a_short_summary(page, live, new_user):
    log_in(page, live.url, new_user())
    ask(page, "请帮我查一下M001的详情，然后告诉我最近一个月的出入库记录和库存变化情况，谢谢")
    finished_answer(page)
    current = page.locator("#conversation-list li.current .title")
    expect(current).to_have_text("查一下M001的详情…")
    expect(page.get_by_role("heading", level=1)).to_have_text("查一下M001的详情…")
    page.get_by_text("管理对话").click()  # renamed from here at once, no reload needed
    expect(page.get_by_label("对话名称")).to_have_value("查一下M001的详情…")
    page.reload()
    expect(page.locator("#conversation-list li.current .title")).to_have_text("查一下M001的详情…")


def test_conversations_are_renamed_searched_and_deleted_from_the_page(browser, live, new_user):
    name = new_user()
    page = open_page(browser)
    log_in(page, live.url, name)
    flour = _new_conversation(page, "帮我查找面粉原料")
    low = _new_conversation(page, "哪些原料库存不足？")

    page.goto(flour)
    page.get_by_text("管理对话").click()
    page.get_by_label("对话名称").fill("面包房面粉")
    page.get_by_role("button", name="重命名").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("面包房面粉")
    expect(page.locator("#conversation-list li.current .title")).to_have_text("面包房面粉")

    search = page.get_by_role("searchbox", name="搜索对话")
    search.fill("库存不足")  # words of the other conversation's question
    expect(page.locator("#conversation-list li")).to_have_count(1)
    expect(page.locator("#conversation-list li a")).to_have_attribute("href", low.replace(live.url, ""))
    search.fill("高筋面粉")  # a word only in an answer (the table of flours)
    expect(page.locator("#conversation-list li .title")).to_have_text(["面包房面粉"])
    search.fill("没有这种东西")
    expect(page.locator("#conversation-list")).to_contain_text("没有找到")
    search.fill("")
    expect(page.locator("#conversation-list li")).to_have_count(2)

    page.goto(low)
    page.get_by_text("管理对话").click()
    page.get_by_role("button", name="删除对话").click()
    page.wait_for_url(f"{live.url}/")
    expect(page.locator(".flash")).to_contain_text("已删除对话")
    expect(page.locator("#conversation-list li")).to_have_count(1)
    assert page.goto(low).status == 404
    with live.app.app_context():  # kept for the audit and admins
        kept = db.session.get(Conversation, low.rsplit("/", 1)[1])
        assert kept is not None and kept.deleted_at is not None
    page.context.close()


def test_the_sidebar_groups_conversations_by_the_plants_day(page, live, new_user):
    name = new_user()
    log_in(page, live.url, name)
    older = _new_conversation(page, "帮我查找面粉原料")
    _new_conversation(page, "哪些原料库存不足？")
    three_days_ago = utcnow() - timedelta(days=3)
    with live.app.app_context():
        user = db.session.scalar(select(User).where(User.username == name))
        conversation = db.session.get(Conversation, older.rsplit("/", 1)[1])
        assert conversation.user_id == user.id
        conversation.updated_at = three_days_ago
        db.session.commit()
    page.reload()
    local = three_days_ago.replace(tzinfo=UTC).astimezone(clock.PLANT)
    headings = page.locator("#conversation-list h3.day")
    expect(headings).to_have_count(2)
    expect(headings.first).to_have_text("今天")
    expect(headings.nth(1)).to_have_text(re.compile(r"^\d{1,2}月\d{1,2}日 周[一二三四五六日]"))
    expect(headings.nth(1)).to_contain_text(f"{local.month}月{local.day}日")
    groups = page.locator("#conversation-list ul")
    expect(groups.first.locator(".title")).to_have_text(["哪些原料库存不足"])
    expect(groups.nth(1).locator(".title")).to_have_text(["查找面粉原料"])
    expect(groups.first.locator("time")).to_have_text([re.compile(r"^\d\d:\d\d$")])


def test_a_failed_answer_is_asked_again_with_one_click(page, live, models):
    scripted = ScriptedProvider(
        ProviderError("the model is down", code="service_unavailable"), answer("这次好了")
    )
    models(lambda _session: (scripted,))
    log_in(page, live.url)
    ask(page, "库存统计")
    failed = finished_answer(page)
    expect(failed).to_have_attribute("data-status", "failed")
    failed.get_by_role("button", name="重试").click()
    again = page.locator(".msg.assistant").last
    expect(again).to_have_attribute("data-status", "completed")
    expect(again.locator(".reply")).to_have_text("这次好了")
    expect(page.locator(".msg.user")).to_have_text(["库存统计", "库存统计"])
    expect(page.get_by_role("button", name="重试")).to_have_count(0)  # the latest answer is fine


def test_a_stopped_answer_offers_to_ask_again(page, live, slow_stats):
    log_in(page, live.url)
    ask(page, "库存统计")
    expect(page.locator(".chip.running")).to_be_visible()
    # the tool is let go only once the stop has been answered: otherwise the answer may finish first
    with page.expect_response(lambda r: r.url.endswith("/cancel")) as stop:
        page.keyboard.press("Escape")
    assert stop.value.ok
    slow_stats.set()
    page.reload()
    stopped = page.locator(".msg.assistant").last
    expect(stopped).to_have_attribute("data-status", "cancelled")
    stopped.get_by_role("button", name="重试").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")


def test_the_last_question_is_edited_and_sent_again(page, live):
    log_in(page, live.url)
    ask(page, "高筋面粉出库5公斤")
    card = page.locator(".confirm")
    expect(card).to_be_visible()
    # While the booking waits for a decision, the question is not offered for editing.
    expect(page.get_by_role("link", name="编辑并重新发送")).to_have_count(0)
    card.get_by_role("button", name="拒绝").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    edit = page.get_by_role("link", name="编辑并重新发送")
    expect(edit).to_have_count(1)
    edit.click()
    box = page.get_by_label("消息")
    expect(box).to_be_focused()
    expect(box).to_have_value("高筋面粉出库5公斤")
    box.fill("高筋面粉出库4公斤")
    box.press("Enter")
    expect(page.locator(".confirm .description")).to_contain_text("4 kg")
    page.reload()  # and without the script's help: the link fills the box from the server
    page.locator(".confirm").get_by_role("button", name="拒绝").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    page.reload()
    href = page.get_by_role("link", name="编辑并重新发送").get_attribute("href")
    page.goto(f"{live.url}{href}")
    expect(page.get_by_label("消息")).to_have_value("高筋面粉出库4公斤")
