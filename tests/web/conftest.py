"""Fixtures of the browser tests: one live server per module (tests share it and its database, so
each works with changes relative to what it finds), one chromium per module, pages, users of a
test's own. Helpers that are not fixtures: tests/support/browser.py."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import pytest

from inventory_ai.assistant.extension import EXTENSION_KEY
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, open_page, serving
from tests.support.factories import UserFactory


@pytest.fixture(scope="module")
def live(databases, tmp_path_factory):
    """The module's server: tests share it and its database."""
    with serving(databases, tmp_path_factory.mktemp("live")) as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live):
    page = open_page(browser)
    yield page
    page.context.close()


@pytest.fixture
def new_user(live):
    """A user of the test's own (a language choice or a sign-off leaves no trace on the others)."""
    made = []

    def make(role: str = "warehouse_staff", language: str | None = None) -> str:
        name = f"user{len(made)}_{time.monotonic_ns() % 10**9}"
        with live.app.app_context():
            UserFactory(username=name, role=role, language=language)
        made.append(name)
        return name

    return make


@pytest.fixture
def slow_stats(live):
    """get_inventory_stats waits until the test lets it go: a tool the page sees running."""
    tool = live.app.extensions[EXTENSION_KEY].registry.get("get_inventory_stats")
    release = threading.Event()
    original = tool.execute

    def execute(arguments, context):
        release.wait(10)
        return original(arguments, context)

    tool.execute = execute
    yield release
    release.set()
    del tool.execute


@pytest.fixture
def models(live):
    """`models(factory)`: who answers, for one test (the configured chain comes back after)."""
    answers = live.app.extensions[EXTENSION_KEY]
    config = live.app.extensions["inventory_ai.config"]
    kept = config.llm_provider, config.llm_model
    with ExitStack() as overrides:

        def use(factory, provider: str = "offline", model: str = "qwen-plus") -> None:
            overrides.enter_context(answers.override(providers=factory))
            config.llm_provider, config.llm_model = provider, model

        yield use
    config.llm_provider, config.llm_model = kept
