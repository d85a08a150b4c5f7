"""A decision about a booking is always a deliberate click on Approve or Reject: Enter in a reason (or
quantity) field decides nothing, on the confirmation card and on the sign-off page, with and without
JavaScript; a form without an explicit decision is refused."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import ToolCallRecord
from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page, stock

pytestmark = BROWSER_TESTS


def _decision_of(app, reason: str) -> tuple[str, str | None]:
    with app.app_context():
        record = db.session.scalar(select(ToolCallRecord).where(ToolCallRecord.decision_reason == reason))
        return (record.status, record.decision_reason) if record is not None else ("", None)


@pytest.mark.parametrize("javascript", [True, False], ids=["script", "no-script"])
@pytest.mark.parametrize("field", ["reason", "quantity"])
def test_enter_in_a_cards_field_decides_nothing(browser, live, javascript, field):
    page = open_page(browser, java_script_enabled=javascript)
    before = stock(live.app)
    log_in(page, live.url)
    if javascript:
        ask(page, "高筋面粉出库3公斤")
    else:
        page.get_by_label("消息").fill("高筋面粉出库3公斤")
        page.get_by_role("button", name="发送").click()
    card = page.locator(".confirm")
    expect(card).to_be_visible()
    reason = f"不要出库，数量不对 {field} {javascript}"
    card.get_by_label("原因（可选）").fill(reason)
    box = card.get_by_label("原因（可选）") if field == "reason" else card.get_by_label("数量 (kg)")
    box.press("Enter")
    page.wait_for_timeout(500)  # room for a submission, had Enter made one
    expect(page.locator(".confirm")).to_be_visible()  # still waiting for a decision
    assert stock(live.app) == before
    # The refusal the reason says is one click away, and it is what happens.
    page.locator(".confirm").get_by_role("button", name="拒绝").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    assert stock(live.app) == before
    assert _decision_of(live.app, reason) == ("declined", reason)
    page.context.close()


@pytest.mark.parametrize("javascript", [True, False], ids=["script", "no-script"])
def test_enter_in_a_sign_off_reason_decides_nothing(browser, live, new_user, javascript):
    requester = new_user()
    staff = open_page(browser)
    log_in(staff, live.url, requester)
    ask(staff, "高筋面粉入库1000公斤")  # 6,200 CNY: waits for a manager
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
    staff.context.close()
    before = stock(live.app)

    manager = open_page(browser, java_script_enabled=javascript)
    log_in(manager, live.url, "manager")
    manager.goto(f"{live.url}/approvals")
    item = manager.locator(".signoff").filter(has_text=requester)
    reason = f"拒绝：没有采购单 {javascript}"
    item.get_by_label("原因（可选）").fill(reason)
    item.get_by_label("原因（可选）").press("Enter")
    manager.wait_for_timeout(500)  # room for a submission, had Enter made one
    assert stock(live.app) == before
    manager.goto(f"{live.url}/approvals")  # as it stands on the server
    item = manager.locator(".signoff").filter(has_text=requester)
    expect(item).to_have_count(1)  # still waiting
    item.get_by_label("原因（可选）").fill(reason)
    item.get_by_role("button", name="驳回").click()
    expect(manager.locator(".flash")).to_contain_text("驳回")
    assert stock(live.app) == before
    manager.context.close()


def test_a_sign_off_form_without_a_decision_is_refused(live, browser, new_user):
    requester = new_user()
    staff = open_page(browser)
    log_in(staff, live.url, requester)
    ask(staff, "高筋面粉入库1000公斤")
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    waiting = staff.locator(".msg.assistant").last
    expect(waiting).to_have_attribute("data-status", "awaiting_signoff")
    staff.context.close()
    before = stock(live.app)
    manager = open_page(browser)
    log_in(manager, live.url, "manager")
    manager.goto(f"{live.url}/approvals")
    form = manager.locator(".signoff").filter(has_text=requester)
    action = form.get_attribute("action")
    token = form.locator("input[name=csrf_token]").get_attribute("value")
    for decision in (None, "", "yes", "APPROVE"):
        data = {"csrf_token": token, "reason": "ok"}
        if decision is not None:
            data["decision"] = decision
        response = manager.request.post(f"{live.url}{action}", form=data, max_redirects=0)
        assert response.status == 400, (decision, response.status)
    assert stock(live.app) == before
    manager.goto(f"{live.url}/approvals")
    expect(manager.locator(".signoff").filter(has_text=requester)).to_have_count(1)
    manager.context.close()


def test_a_card_form_without_a_decision_is_refused(page, live):
    before = stock(live.app)
    log_in(page, live.url)
    ask(page, "高筋面粉出库4公斤")
    card = page.locator(".confirm")
    expect(card).to_be_visible()
    action = card.get_attribute("action")
    fields = {
        name: card.locator(f"input[name={name}]").get_attribute("value")
        for name in ("csrf_token", "tool_call_id", "asked_quantity")
    }
    for decision in (None, "", "ok"):
        data = {**fields, "quantity": "4", "reason": "fine"}
        if decision is not None:
            data["decision"] = decision
        response = page.request.post(f"{live.url}{action}", form=data, max_redirects=0)
        assert response.status == 400, (decision, response.status)
    assert stock(live.app) == before
    finished = finished_answer(page)
    assert finished.get_attribute("data-status") == "awaiting_confirmation"
