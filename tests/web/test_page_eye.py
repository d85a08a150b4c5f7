"""Where the eye is on the chat page: a finished answer and a card's buttons in view, a conversation
opened at its latest message, "jump to latest" when scrolled up, something to see from send to the
first words, and an answer that a reload neither stops nor loses."""

from __future__ import annotations

import threading
import time

from playwright.sync_api import expect

from inventory_ai.assistant.types import TextDelta
from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, message_status
from tests.support.scripted import answer
from tests.support.viewport import in_view

pytestmark = BROWSER_TESTS


def _a_long_conversation(page) -> None:
    """Two tall answers (a table of flours, a material with its chart): more than a screen."""
    for question in ("帮我查找面粉原料", "M001 详情"):
        ask(page, question)
        finished_answer(page)
        expect(page.get_by_label("消息")).to_be_editable()


def test_a_finished_answer_and_its_cards_buttons_are_in_view(page, live):
    log_in(page, live.url)
    _a_long_conversation(page)
    ask(page, "高筋面粉出库2公斤")
    card = page.locator(".confirm")
    expect(card).to_be_visible()
    approve = card.get_by_role("button", name="确认")
    for _ in range(30):  # the page settles its scroll once the stored answer is drawn
        if in_view(approve):
            break
        page.wait_for_timeout(100)
    assert in_view(approve), "the card's Approve button must be on the screen, not under the message box"
    assert in_view(card.get_by_role("button", name="拒绝"))


def test_opening_a_conversation_lands_at_its_latest_message_and_jump_to_latest_returns(page, live):
    log_in(page, live.url)
    _a_long_conversation(page)
    ask(page, "哪些原料库存不足？")
    finished_answer(page)
    page.goto(page.url)  # opened again, as from the sidebar or a link
    latest = page.locator(".msg.assistant").last
    expect(latest).to_have_attribute("data-status", "completed")
    for _ in range(30):
        if page.evaluate("window.scrollY") > 0:
            break
        page.wait_for_timeout(100)
    assert page.evaluate("window.scrollY") > 0, "the page must open at its latest message, not its top"
    assert in_view(latest.locator(".reply"))
    jump = page.get_by_role("button", name="回到最新消息")
    expect(jump).to_be_hidden()  # at the latest already
    page.evaluate("window.scrollTo(0, 0)")
    expect(jump).to_be_visible()
    jump.click()
    expect(jump).to_be_hidden()
    assert in_view(latest.locator(".reply"))


class Hesitant:
    """A model that says nothing until the test lets it: the page's wait before the first words."""

    name, model, costs_tokens = "hesitant", "hesitant-1", False

    def __init__(self):
        self.go = threading.Event()

    def stream(self, request):
        self.go.wait(15)
        yield TextDelta("好的，")
        yield answer("好的，这就是回答。")


def test_something_shows_from_send_to_the_first_words(page, live, models):
    model = Hesitant()
    models(lambda _session: (model,))
    log_in(page, live.url)
    ask(page, "你好")
    waiting = page.locator(".msg.assistant").last.locator(".waiting")
    expect(waiting).to_be_visible()
    expect(waiting).to_have_text("正在思考…")
    assert waiting.get_attribute("role") == "status"
    model.go.set()
    done = finished_answer(page)
    expect(done.locator(".reply")).to_have_text("好的，这就是回答。")
    expect(page.locator(".waiting")).to_have_count(0)


class Slow:
    """A model that talks for a few seconds: `pieces` bits of text, then its reply."""

    name, model, costs_tokens = "slow", "slow-1", False

    def __init__(self, pieces: int = 40, pause: float = 0.1):
        self.pieces, self.pause = pieces, pause

    def stream(self, request):
        for _ in range(self.pieces):
            time.sleep(self.pause)
            yield TextDelta("…")
        yield answer("说完了：高筋面粉还有 100 kg。")


def test_a_reload_during_an_answer_neither_stops_it_nor_loses_it(page, live, models):
    models(lambda _session: (Slow(),))
    log_in(page, live.url)
    ask(page, "慢慢说高筋面粉的库存")
    live_view = page.locator(".msg.assistant").last
    expect(live_view.locator(".reply.live")).to_contain_text("…")
    message_id = live_view.get_attribute("data-message-id")
    page.reload()  # mid-answer
    reloaded = page.locator(f'.msg.assistant[data-message-id="{message_id}"]')
    expect(reloaded).to_be_visible()
    # The reloaded page picks the running answer up and shows it when it ends, by itself.
    expect(reloaded).to_have_attribute("data-status", "completed")
    expect(reloaded.locator(".reply")).to_have_text("说完了：高筋面粉还有 100 kg。")
    assert message_status(live.app, message_id) == "completed"
    expect(page.locator(".note.stopped")).to_have_count(0)
    expect(page.get_by_role("button", name="发送")).to_be_enabled()
