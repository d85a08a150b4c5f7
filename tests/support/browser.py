"""The staff pages in a real browser: Debian's chromium driven by Playwright, against a live server
in a thread of the test process on a fresh seeded database with the offline provider.

Helpers for the browser tests (tests/web/); their fixtures are in tests/web/conftest.py."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pytest
from flask import Flask, request
from playwright.sync_api import expect
from sqlalchemy import func, select
from werkzeug.serving import make_server

from inventory_ai import create_app
from inventory_ai.assistant.extension import EXTENSION_KEY, offline_lexicon
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Material, StockLevel
from tests.support.databases import PASSWORD, let_go

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# `make screenshots` writes them into docs/; an ordinary run takes them in a temporary folder, so the
# suite leaves the working tree as it found it.
DOC_SCREENSHOTS = Path(__file__).resolve().parent.parent.parent / "docs" / "screenshots"
CONVERSATION_URL = re.compile(r"/c/[0-9a-f]{32}$")
# A busy machine (the suite, other work) can make an answer take seconds.
expect.set_options(timeout=15_000)
# Every browser test module: `pytestmark = BROWSER_TESTS`.
BROWSER_TESTS = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="Debian chromium is not installed (make test installs it)"
    ),
]


@dataclass
class Live:
    app: Flask
    url: str
    # Every request the server refused or failed (status >= 400), as (status, path): a page that
    # loads cleanly leaves none, favicon included (the browser asks for it; Playwright does not say).
    refused: list[tuple[int, str]] = field(default_factory=list)


@contextmanager
def serving(databases, folder: Path) -> Iterator[Live]:
    """A live server on a fresh seeded database, in a thread of this process."""
    url = databases.fresh()
    os.chdir(folder)
    app = create_app(config_for_tests(url))
    with app.app_context():  # the offline assistant trains its classifier once per process: now
        offline_lexicon(db.session, app.extensions[EXTENSION_KEY].registry)
    served = Live(app, "")

    @app.after_request
    def _note_refusals(response):
        if response.status_code >= 400:
            served.refused.append((response.status_code, request.path))
        return response

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield served
    finally:
        server.shutdown()
        let_go(app)
        databases.drop(url)


def open_page(browser, locale: str = "zh-CN", width: int = 1366, height: int = 900, **options):
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height}, **options)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def log_in(page, base: str, username: str = "staff") -> None:
    page.goto(f"{base}/login")
    page.get_by_label(re.compile("用户名|Username")).fill(username)
    page.get_by_label(re.compile("密码|Password")).fill(PASSWORD)
    page.get_by_role("button", name=re.compile("登录|Log in")).click()
    page.wait_for_url(f"{base}/")


def ask(page, text: str) -> None:
    box = page.get_by_label(re.compile("^(消息|Message)$"))
    box.fill(text)
    box.press("Enter")


def finished_answer(page):
    """The last answer, once the server's rendering of it has replaced the live view."""
    answer = page.locator(".msg.assistant").last
    expect(answer).to_have_attribute("data-status", re.compile("completed|awaiting|failed|cancelled"))
    return answer


def stock(app, code: str = "M001") -> Decimal:
    with app.app_context():
        return db.session.scalar(
            select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == code)
        )


def message_status(app, message_id: str) -> str:
    with app.app_context():
        return db.session.get(ChatMessage, message_id).status
