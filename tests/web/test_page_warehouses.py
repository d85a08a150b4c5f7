"""The pages of a person limited to some warehouses (issue 34), in a browser: the overview's figures,
charts and tables are the cold store's only and say so; the sign-off page lists the bookings of the
manager's warehouses only, and deciding another is 404. An admin sees every warehouse."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.support.browser import BROWSER_TESTS, ask, log_in, open_page
from tests.support.factories import UserFactory

pytestmark = BROWSER_TESTS
OTHERS = ("主仓库", "包材仓", "Main Warehouse", "Packaging Store")


def scoped_user(live, role: str, warehouses, stem: str) -> str:
    with live.app.app_context():
        return UserFactory(
            username=f"{stem}_{id(live) % 10**6}_{role[:4]}", role=role, warehouses=warehouses
        ).username


def test_the_overview_shows_the_cold_store_only_and_says_so(browser, live):
    page = open_page(browser)
    log_in(page, live.url, scoped_user(live, "warehouse_manager", ["WH02"], "ovw"))
    page.goto(f"{live.url}/overview")
    expect(page.locator("[data-sites-only]")).to_have_text("仅限冷库")
    main = page.locator("main")
    expect(main.locator(".charts")).to_contain_text("冷库")
    text = main.inner_text()
    assert not [w for w in OTHERS if w in text], text[:2000]
    page.goto(f"{live.url}/")
    assert page.locator("[data-sites-only]").get_attribute("data-sites-only") is not None
    page.context.close()

    admin = open_page(browser)
    log_in(admin, live.url, "admin")
    admin.goto(f"{live.url}/overview")
    expect(admin.locator("[data-sites-only]")).to_have_count(0)
    for name in ("主仓库", "冷库", "包材仓"):
        expect(admin.locator(".charts")).to_contain_text(name)
    admin.context.close()


def _waiting_signoff(browser, live, username: str, text: str):
    page = open_page(browser)
    log_in(page, live.url, username)
    ask(page, text)
    page.locator(".confirm").get_by_role("button", name="确认").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
    return page


def test_the_signoff_page_lists_the_managers_warehouses_only(browser, live):
    cold_staff = scoped_user(live, "warehouse_staff", ["WH02"], "cst")
    main_staff = scoped_user(live, "warehouse_staff", ["WH01"], "mst")
    pages = [
        _waiting_signoff(browser, live, cold_staff, "冷库入库高筋面粉1000公斤"),
        _waiting_signoff(browser, live, main_staff, "主仓库入库高筋面粉1000公斤"),
    ]
    manager = open_page(browser)
    log_in(manager, live.url, scoped_user(live, "warehouse_manager", ["WH02"], "cmg"))
    manager.get_by_role("link", name=re.compile("待签核")).click()
    expect(manager.locator("[data-sites-only]")).to_have_text("仅限冷库")
    expect(manager.locator(".signoff").filter(has_text=cold_staff)).to_have_count(1)
    expect(manager.locator(".signoff").filter(has_text=main_staff)).to_have_count(0)
    assert "主仓库" not in manager.locator("main").inner_text()

    everyone = open_page(browser)
    log_in(everyone, live.url, "manager")
    everyone.goto(f"{live.url}/approvals")
    main_form = everyone.locator(".signoff").filter(has_text=main_staff)
    expect(main_form).to_have_count(1)
    action = main_form.get_attribute("action")
    token = manager.locator("input[name=csrf_token]").first.get_attribute("value")
    refused = manager.request.post(
        f"{live.url}{action}", form={"decision": "approve", "csrf_token": token}, max_redirects=0
    )
    assert refused.status == 404
    for page in (*pages, manager, everyone):
        page.context.close()
