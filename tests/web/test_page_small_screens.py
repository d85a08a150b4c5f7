"""The pages on a phone (390x844) and a tablet (820x1180): the navigation waits behind a menu button
instead of taking the top of the screen, wide tables scroll sideways and say so, and nothing is cut
at the right edge."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page
from tests.support.viewport import cut_at_the_right

pytestmark = BROWSER_TESTS

SIZES = {"phone": (390, 844), "tablet": (820, 1180)}


@pytest.mark.parametrize("size", SIZES)
def test_the_navigation_waits_behind_a_menu_button(browser, live, size):
    width, height = SIZES[size]
    page = open_page(browser, width=width, height=height)
    log_in(page, live.url)
    ask(page, "帮我查找面粉原料，然后告诉我哪一种最适合做面包，谢谢")
    finished_answer(page)
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_hidden()
    # The conversation starts at the top of the screen, not under a block of navigation.
    assert page.locator("main.chat").evaluate("(n) => n.getBoundingClientRect().top + scrollY") < 80
    menu = page.get_by_role("button", name="菜单")
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.click()
    expect(sidebar).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    title = sidebar.locator("#conversation-list li.current .title")
    expect(title).to_be_visible()
    # A title is shown whole (it may wrap), not cut mid-line.
    assert title.evaluate("(n) => n.scrollWidth <= n.clientWidth && n.scrollHeight <= n.clientHeight + 1")
    assert sidebar.bounding_box()["width"] <= width
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    expect(menu).to_be_focused()
    page.goto(f"{live.url}/overview")  # the other pages have the same menu
    expect(page.locator("#sidebar")).to_be_hidden()
    page.get_by_role("button", name="菜单").click()
    expect(page.locator("#sidebar").get_by_role("link", name="库存概览")).to_be_visible()
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_wide_tables_scroll_sideways_with_a_hint_and_nothing_is_cut_at_the_right(browser, live, size):
    width, height = SIZES[size]
    page = open_page(browser, width=width, height=height)
    log_in(page, live.url)
    ask(page, "M001 的出入库记录")
    answer = finished_answer(page)
    wrap = answer.locator(".table-wrap").first
    expect(wrap).to_be_visible()
    wide = wrap.evaluate("(n) => n.scrollWidth > n.clientWidth")
    hint = answer.locator(".scroll-hint").first
    if wide:
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("左右滑动")
        assert wrap.get_attribute("tabindex") == "0"  # a keyboard can scroll it too
    else:
        expect(hint).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert cut_at_the_right(page) == []
    if size == "phone":
        assert wide, "seven columns of movements are wider than a phone"
    for path in ("/overview",):
        page.goto(f"{live.url}{path}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert cut_at_the_right(page) == []
    page.context.close()
