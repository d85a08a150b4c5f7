"""The pages by keyboard and for assistive technology: skip links to the message box and the newest
card, an h1 on the chat page, the `lang` of text in the other language, and axe-core (vendored,
tests/support/vendor/) finding no serious or critical violation on any page, for every role, at
desktop, tablet and phone sizes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.axe import axe_violations, serious
from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page
from tests.support.factories import UserFactory

pytestmark = BROWSER_TESTS

SIZES = {"desktop": (1366, 900), "tablet": (820, 1180), "phone": (390, 844)}
ROLES = ("staff", "manager", "purchaser", "admin")


def test_skip_links_reach_the_message_box_and_the_newest_card(page, live):
    log_in(page, live.url)
    for question in ("帮我查找面粉原料", "M001 详情"):
        ask(page, question)
        finished_answer(page)
    ask(page, "高筋面粉出库2公斤")
    expect(page.locator(".confirm")).to_be_visible()
    page.reload()
    # The first two stops of the page in tab order are the skip links.
    first = page.evaluate(
        """() => [...document.querySelectorAll("a[href], button, input, textarea, summary, [tabindex]")]
                 .filter((n) => !n.closest("[hidden]") && n.tabIndex >= 0).slice(0, 2).map((n) => n.textContent.trim())"""
    )
    assert first == ["跳到输入框", "跳到待确认的库存变动"]
    skip = page.get_by_role("link", name="跳到输入框")
    skip.focus()
    expect(skip).to_be_visible()  # shown when focused
    page.keyboard.press("Enter")
    expect(page.get_by_label("消息")).to_be_focused()
    skip.focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="跳到待确认的库存变动")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".confirm").get_by_label("数量 (kg)")).to_be_focused()  # 3 keys, not 28 Tabs


def test_the_chat_page_has_an_h1_and_text_in_the_other_language_says_which(browser, live, new_user):
    page = open_page(browser)
    log_in(page, live.url, new_user(language="en"))
    expect(page.get_by_role("heading", level=1)).to_have_text("New conversation")
    ask(page, "帮我查找面粉原料")
    finished_answer(page)
    expect(page.locator(".msg.user").last).to_have_attribute("lang", "zh-CN")
    expect(page.locator("#conversation-list li.current .title")).to_have_attribute("lang", "zh-CN")
    page.reload()
    expect(page.locator(".msg.user").last).to_have_attribute("lang", "zh-CN")
    expect(page.get_by_role("heading", level=1)).to_have_attribute("lang", "zh-CN")
    ask(page, "what is running low?")
    finished_answer(page)
    assert page.locator(".msg.user").last.get_attribute("lang") is None  # the page's own language
    page.context.close()


def test_sidebar_times_and_notes_have_enough_contrast(page, live):
    log_in(page, live.url)
    ask(page, "帮我查找面粉原料")
    finished_answer(page)
    time = page.locator("#conversation-list li.current time")
    ratio = time.evaluate(
        """(node) => {
             const rgb = (s) => s.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
             const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                                  return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
             let back = node, bg = "rgba(0, 0, 0, 0)";
             while (back && (bg = getComputedStyle(back).backgroundColor) === "rgba(0, 0, 0, 0)") back = back.parentElement;
             const [a, b] = [lum(rgb(getComputedStyle(node).color)), lum(rgb(bg))];
             return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
           }"""
    )
    assert ratio >= 4.5, ratio


@pytest.fixture(scope="module")
def waiting_signoff(browser, live):
    """A booking waiting for a manager, so the sign-off page has a form on it."""
    with live.app.app_context():
        UserFactory(username="axe_requester", role="warehouse_staff")
    page = open_page(browser)
    log_in(page, live.url, "axe_requester")
    ask(page, "高筋面粉入库1000公斤")
    page.locator(".confirm").get_by_role("button", name="确认").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
    page.context.close()


def _check(page, where: str, found: dict) -> None:
    violations = axe_violations(page)
    found[where] = (len(serious(violations)), len(violations), serious(violations))
    print(where, [(v["impact"], v["id"]) for v in violations])


def _report(found: dict) -> str:
    lines = [
        f"{where}: {n_serious} serious/critical of {n_all}" for where, (n_serious, n_all, _) in found.items()
    ]
    details = [
        f"{where}: {v['impact']} {v['id']} x{v['nodes']} at {v['where']}"
        for where, (_, _, vs) in found.items()
        for v in vs
    ]
    return "\n".join(lines + details)


def test_axe_finds_nothing_serious_on_the_login_page(browser, live):
    found = {}
    for size, (width, height) in SIZES.items():
        page = open_page(browser, width=width, height=height)
        page.goto(f"{live.url}/login")
        _check(page, f"login {size}", found)
        page.get_by_label("用户名").fill("nobody")
        page.get_by_label("密码").fill("wrong password")
        page.get_by_role("button", name="登录").click()
        expect(page.locator(".flash.error")).to_be_visible()
        _check(page, f"login refused {size}", found)
        page.context.close()
    print("\n" + _report(found))
    assert all(n == 0 for n, _, _ in found.values()), _report(found)


@pytest.mark.parametrize("role", ROLES)
def test_axe_finds_nothing_serious_on_any_page_for_any_role(browser, live, role, waiting_signoff):
    page = open_page(browser)
    log_in(page, live.url, role)
    questions = ["帮我查找面粉原料", "M001 详情"]
    if role != "purchaser":  # purchasers book nothing: no card
        questions.append("高筋面粉出库1公斤")
    for question in questions:
        ask(page, question)
        finished_answer(page)
        expect(page.get_by_label("消息")).to_be_editable()
    chat = page.url
    found = {}
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(chat)
        expect(page.locator(".msg.assistant")).to_have_count(len(questions))
        _check(page, f"chat {size}", found)
        if size != "desktop":
            page.get_by_role("button", name="菜单").click()
            expect(page.locator("#sidebar")).to_be_visible()
            _check(page, f"chat, menu open {size}", found)
        page.goto(f"{live.url}/overview")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        _check(page, f"overview {size}", found)
        response = page.goto(f"{live.url}/approvals")
        if response.status == 200:
            expect(page.locator(".signoff").first).to_be_visible()
        _check(page, f"approvals ({response.status}) {size}", found)
    page.context.close()
    print(f"\n{role}\n" + _report(found))
    assert all(n == 0 for n, _, _ in found.values()), _report(found)


def test_menu_and_skip_links_are_named_for_the_keyboard(browser, live):
    page = open_page(browser, width=390, height=844)
    log_in(page, live.url)
    menu = page.get_by_role("button", name=re.compile("菜单"))
    menu.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#sidebar")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    page.context.close()
