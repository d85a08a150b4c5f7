"""The staff web form in a real browser: Debian's chromium driven by Playwright, against a live server
on the seeded database with the offline provider. Screenshots go to docs/screenshots/."""

from __future__ import annotations

import os
import re
import shutil
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select
from werkzeug.serving import make_server

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel
from tests.conftest import PASSWORD

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="Debian chromium is not installed (make test installs it)"
    ),
]


@pytest.fixture(scope="module")
def live_server(databases, tmp_path_factory):
    url = databases.fresh()
    os.chdir(tmp_path_factory.mktemp("live"))
    app = create_app(config_for_tests(url))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    with app.app_context():
        db.engine.dispose()
    databases.drop(url)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def log_in(page, base: str, username: str = "staff") -> None:
    page.goto(f"{base}/login")
    page.get_by_label("用户名").fill(username)
    page.get_by_label("密码").fill(PASSWORD)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"{base}/")


def ask(page, text: str) -> None:
    box = page.get_by_label("消息")
    box.fill(text)
    box.press("Enter")


def m001(app) -> Decimal:
    with app.app_context():
        return db.session.scalar(
            select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == "M001")
        )


def test_search_shows_a_table_and_a_completed_tool_chip(page, live_server):
    app, base = live_server
    log_in(page, base)
    ask(page, "帮我查找面粉原料")
    answer = page.locator(".msg.assistant").last
    answer.locator(".chip.success").wait_for()
    assert answer.locator(".chip.success").inner_text() == "✓ 搜索原料 · 13 条结果"
    rows = answer.locator("table.results tbody tr")
    assert rows.count() == 10
    first = rows.first.locator("td").all_inner_texts()
    assert first == ["M001", "高筋面粉", "100", "kg", "主仓库"]
    assert "找到 13 种" in answer.locator(".reply").inner_text()
    page.wait_for_url(re.compile(r"/c/[0-9a-f]{32}$"))  # the conversation has its own address now
    expect(page.get_by_label("消息")).to_be_focused()  # focus is back in the input
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "chat-desktop.png"), full_page=True)
    page.set_viewport_size({"width": 820, "height": 1180})  # a tablet held upright
    page.screenshot(path=str(SCREENSHOTS / "chat-tablet.png"), full_page=True)


def test_booking_asks_for_confirmation_and_approval_books_it(page, live_server):
    app, base = live_server
    before = m001(app)
    log_in(page, base)
    ask(page, "高筋面粉出库20公斤")
    card = page.locator(".confirm")
    card.wait_for()
    assert "出库 20 kg 高筋面粉 (M001)，主仓库" in card.inner_text()
    assert m001(app) == before  # nothing is booked before the approval
    page.screenshot(path=str(SCREENSHOTS / "confirmation.png"))
    card.get_by_role("button", name="确认").click()
    reply = page.locator(".msg.assistant .reply").last
    expect(reply).to_contain_text(
        f"{before:.0f} → {before - 20:.0f} kg"
    )  # no eval: the page's CSP forbids it
    assert page.locator(".confirm").count() == 0
    assert m001(app) == before - 20


def test_rejecting_a_booking_books_nothing(page, live_server):
    app, base = live_server
    before = m001(app)
    log_in(page, base)
    ask(page, "book out 5 kg M001")
    page.locator(".confirm").wait_for()
    page.locator(".confirm").get_by_role("button", name="拒绝").click()
    expect(page.locator(".msg.assistant .reply").last).to_contain_text("nothing was booked")
    assert page.locator(".chip.declined").count() == 1
    assert m001(app) == before


def test_history_persists_and_another_users_conversation_is_404(page, live_server, browser):
    app, base = live_server
    log_in(page, base)
    ask(page, "what is running low?")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]{32}$"))  # set when the answer is done
    mine = page.url
    page.reload()  # the server-rendered page shows the same answer, with its table
    assert page.locator("table.results tbody tr").count() == 10
    assert page.locator("#conversation-list li.current").count() == 1
    other = browser.new_context(locale="zh-CN").new_page()
    log_in(other, base, "manager")
    response = other.goto(mine)
    assert response.status == 404
    other.context.close()


def test_english_interface_and_log_out(browser, live_server):
    app, base = live_server
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.goto(f"{base}/login")
    page.get_by_label("Username").fill("staff")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name="Send").wait_for()
    page.get_by_role("button", name=re.compile("Log out")).click()
    page.wait_for_url(f"{base}/login")
    assert page.goto(f"{base}/").url.startswith(f"{base}/login")
    context.close()
