"""A booking waiting for a manager's sign-off, as its requester lives with it on the page: the
conversation goes on meanwhile, the outcome (who decided, when on the plant's clock, why) appears on
that booking's own answer at its place without a reload, and the sidebar marks the conversation."""

from __future__ import annotations

import re
from datetime import UTC
from zoneinfo import ZoneInfo

from playwright.sync_api import expect
from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import Signoff, ToolCallRecord, ToolRound
from tests.support.browser import BROWSER_TESTS, ask, log_in, open_page, stock

pytestmark = BROWSER_TESTS

PLANT = ZoneInfo("Asia/Shanghai")  # INVENTORY_AI_TIMEZONE's default, which the tests run with


def requester_waiting(browser, live, requester: str, text: str = "高筋面粉入库1000公斤"):
    """The requester's page with a large booking they approved, now waiting for a manager."""
    staff = open_page(browser)
    staff.add_init_script("window.inventoryPollMs = 300")  # the page asks how things stand every 15 s
    log_in(staff, live.url, requester)
    ask(staff, text)  # 1000 kg of M001 at CNY 6.20: 6,200, more than a requester may book alone
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
    return staff


def decide_on_the_approvals_page(browser, live, requester: str, button: str, reason: str, nth: int = 0):
    manager = open_page(browser)
    log_in(manager, live.url, "manager")
    manager.goto(f"{live.url}/approvals")
    item = manager.locator(".signoff").filter(has_text=requester).nth(nth)
    item.get_by_label("原因（可选）").fill(reason)
    item.get_by_role("button", name=button).click()
    expect(manager.locator(".flash")).to_be_visible()
    manager.context.close()


def decided_at_on_the_plant_clock(live, message_id: str) -> str:
    with live.app.app_context():
        decided = db.session.scalar(select(Signoff.decided_at).where(Signoff.message_id == message_id))
    return decided.replace(tzinfo=UTC).astimezone(PLANT).strftime("%Y-%m-%d %H:%M")


def test_the_requester_sees_who_rejected_when_and_why(browser, live, new_user):
    requester = new_user()
    before = stock(live.app)
    staff = requester_waiting(browser, live, requester)
    waiting = staff.locator(".msg.assistant").last
    message_id = waiting.get_attribute("data-message-id")
    decide_on_the_approvals_page(browser, live, requester, "驳回", "没有采购单")
    # On the requester's page, without a reload: the decision, its maker, its time and its reason.
    expect(waiting).to_have_attribute("data-status", "completed")
    outcome = waiting.locator(".note.signoff-outcome")
    at = decided_at_on_the_plant_clock(live, message_id)
    expect(outcome).to_have_text(f"manager 已于 {at} 驳回签核，理由：没有采购单")
    assert stock(live.app) == before
    # The API says the same on that message.
    signoff = staff.request.get(f"{live.url}/api/v1/chat/messages/{message_id}").json()["signoff"]
    assert (signoff["decision"], signoff["by"], signoff["reason"]) == ("rejected", "manager", "没有采购单")
    # And it is still there after a reload.
    staff.reload()
    expect(staff.locator(f'[data-message-id="{message_id}"] .note.signoff-outcome')).to_contain_text(
        "没有采购单"
    )
    staff.context.close()


def test_the_conversation_goes_on_while_a_booking_waits_and_the_outcome_lands_in_its_place(
    browser, live, new_user
):
    requester = new_user()
    staff = requester_waiting(browser, live, requester)
    first = staff.locator(".msg.assistant").first
    mark = staff.locator("#conversation-list li.current .signoff-mark")
    expect(mark).to_have_text("待主管签核")  # the sidebar marks the waiting conversation
    # A new question in the same conversation is answered, not refused.
    ask(staff, "哪些原料库存不足？")
    later = staff.locator(".msg.assistant").nth(1)
    expect(later).to_have_attribute("data-status", "completed")
    expect(later).to_contain_text("低于补货点")
    expect(staff.locator("#transcript .error")).to_have_count(0)
    expect(first).to_have_attribute("data-status", "awaiting_signoff")

    decide_on_the_approvals_page(browser, live, requester, "批准", "月底备货")
    # The outcome lands on the first answer, at its place (before the later question), unreloaded.
    expect(first).to_have_attribute("data-status", "completed")
    expect(first.locator(".note.signoff-outcome")).to_contain_text("manager 已于")
    expect(first.locator(".reply")).to_contain_text("1,100")  # 1,100 kg: figures as people read them
    expect(staff.locator("#transcript > .msg").nth(2)).to_have_class(re.compile("user"))
    expect(mark).to_have_text("签核已批准")  # and the sidebar marks the conversation
    # After a reload: both questions in the order asked; opening the conversation saw the outcome.
    staff.reload()
    expect(staff.locator("#transcript .msg.user")).to_have_text(
        ["高筋面粉入库1000公斤", "哪些原料库存不足？"]
    )
    expect(staff.locator("#conversation-list li.current .signoff-mark")).to_have_count(0)
    staff.context.close()


def test_the_sidebar_marks_another_conversation_whose_booking_was_decided(browser, live, new_user):
    requester = new_user()
    staff = requester_waiting(browser, live, requester)
    waiting_href = staff.locator("#conversation-list li.current a").get_attribute("href")
    staff.goto(f"{live.url}/")  # a new conversation: the waiting one is only in the sidebar now
    ask(staff, "哪些原料库存不足？")
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    other = staff.locator(f'#conversation-list a[href="{waiting_href}"] .signoff-mark')
    expect(other).to_have_text("待主管签核")
    decide_on_the_approvals_page(browser, live, requester, "驳回", "重复申请")
    expect(other).to_have_text("签核被驳回")  # without a reload
    staff.locator(f'#conversation-list a[href="{waiting_href}"]').click()
    expect(staff.locator(".note.signoff-outcome")).to_contain_text("重复申请")
    expect(staff.locator(f'#conversation-list a[href="{waiting_href}"] .signoff-mark')).to_have_count(0)
    staff.context.close()


def test_a_second_large_booking_in_the_conversation_waits_on_its_own(browser, live, new_user):
    requester = new_user()
    staff = requester_waiting(browser, live, requester)
    ask(staff, "高筋面粉入库900公斤")  # 5,580 CNY: waits too
    staff.locator(".msg.assistant").last.locator(".confirm").get_by_role("button", name="确认").click()
    answers = staff.locator(".msg.assistant")
    expect(answers.nth(1)).to_have_attribute("data-status", "awaiting_signoff")
    expect(answers.first).to_have_attribute("data-status", "awaiting_signoff")
    with live.app.app_context():
        waiting = db.session.scalars(
            select(ToolCallRecord.call_id)
            .join(ToolRound)
            .where(ToolRound.message_id == answers.nth(1).get_attribute("data-message-id"))
        ).all()
    assert len(waiting) == 1
    decide_on_the_approvals_page(browser, live, requester, "驳回", "只要一笔", nth=1)
    expect(answers.nth(1)).to_have_attribute("data-status", "completed")
    expect(answers.nth(1).locator(".note.signoff-outcome")).to_contain_text("只要一笔")
    expect(answers.first).to_have_attribute("data-status", "awaiting_signoff")  # still its own wait
    staff.context.close()
