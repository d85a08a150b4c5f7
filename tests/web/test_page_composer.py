"""The message box and the errors around it: several lines (Shift+Enter), Enter sends but not while an
IME composes, a counter before the 4,000-character limit, the server's field errors in words, and
plain errors for a session that ended elsewhere or a server out of reach. Nothing typed is lost."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.support.browser import BROWSER_TESTS, CONVERSATION_URL, ask, finished_answer, log_in
from tests.support.databases import PASSWORD

pytestmark = BROWSER_TESTS


def test_shift_enter_is_a_new_line_and_enter_sends_unless_an_ime_is_composing(page, live):
    log_in(page, live.url)
    box = page.get_by_label("消息")
    box.type("高筋面粉还有多少")
    box.press("Shift+Enter")
    box.type("低筋面粉呢")
    expect(box).to_have_value("高筋面粉还有多少\n低筋面粉呢")
    # Enter that picks a pinyin candidate belongs to the input method, not to the page.
    box.dispatch_event("keydown", {"key": "Enter", "isComposing": True, "keyCode": 229})
    expect(box).to_have_value("高筋面粉还有多少\n低筋面粉呢")
    assert page.locator(".msg.user").count() == 0
    box.press("Enter")
    expect(page.locator(".msg.user")).to_have_text("高筋面粉还有多少\n低筋面粉呢")
    finished_answer(page)
    expect(box).to_have_value("")


def test_a_counter_shows_before_the_limit_and_the_servers_field_errors_are_shown(page, live):
    log_in(page, live.url)
    box = page.get_by_label("消息")
    counter = page.locator("#message-count")
    box.fill("面粉" * 100)
    expect(counter).to_be_hidden()  # far from the limit: no noise
    box.fill("粉" * 3300)
    expect(counter).to_be_visible()
    expect(counter).to_have_text("3,300 / 4,000 字")
    box.fill("粉" * 4100)  # the box stops at the limit
    expect(counter).to_have_text("4,000 / 4,000 字")
    # A message the server refuses (here: past its limit, the box's own limit taken away) comes
    # back with the server's words for the field, and stays in the box.
    page.evaluate("document.getElementById('message').removeAttribute('maxlength')")
    box.fill("粉" * 4100)
    box.press("Enter")
    problem = page.locator("#ask-problem")
    expect(problem).to_be_visible()
    expect(problem).to_contain_text("消息: Length must be between 1 and 4000.")
    assert "see details" not in problem.inner_text()
    expect(box).to_have_value("粉" * 4100)
    assert page.locator(".msg.user").count() == 0  # no question that was never asked


def test_logged_out_in_another_tab_says_so_and_the_link_comes_back_here(page, live):
    log_in(page, live.url)
    ask(page, "哪些原料库存不足？")
    finished_answer(page)
    page.wait_for_url(CONVERSATION_URL)
    conversation = page.url
    other = page.context.new_page()  # another tab of the same browser
    other.goto(f"{live.url}/")
    other.get_by_role("button", name=re.compile("退出")).click()
    other.wait_for_url(re.compile("/login"))
    other.close()
    box = page.get_by_label("消息")
    box.fill("那高筋面粉呢？")
    box.press("Enter")
    problem = page.locator("#ask-problem")
    expect(problem).to_contain_text("您已退出登录")
    assert "authentication" not in problem.inner_text().lower()
    expect(box).to_have_value("那高筋面粉呢？")
    problem.get_by_role("link", name="重新登录并回到此对话").click()
    page.get_by_label("用户名").fill("staff")
    page.get_by_label("密码").fill(PASSWORD)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(conversation)
    expect(page.get_by_label("消息")).to_have_value("那高筋面粉呢？")  # what was typed is still there


def test_a_server_out_of_reach_is_said_plainly_and_the_question_is_sent_when_it_answers(page, live):
    page.add_init_script("window.inventoryRetryMs = 300")
    log_in(page, live.url)
    refused = []

    def unreachable(route):
        refused.append(route.request.url)
        route.abort("connectionrefused")

    page.route("**/api/v1/chat", unreachable)
    ask(page, "哪些原料库存不足？")
    note = page.locator(".msg.assistant").last.locator(".note.unreachable")
    expect(note).to_have_text("无法连接服务器，正在重试…")
    assert "Failed to fetch" not in page.locator("body").inner_text()
    while len(refused) < 2:  # it tries again by itself
        page.wait_for_timeout(100)
    page.unroute("**/api/v1/chat")
    answer = finished_answer(page)
    expect(answer).to_have_attribute("data-status", "completed")
    expect(answer.locator("table.results tbody tr")).to_have_count(10)
    expect(page.locator(".note.unreachable")).to_have_count(0)
    assert page.locator(".msg.user").count() == 1  # asked once
