"""Approvers see the effect, in a real browser (Debian chromium through Playwright, the offline
assistant): the confirmation card and the sign-off page show per warehouse the level now and after
the booking, the value and what it flags, computed when the page is drawn."""

from __future__ import annotations

import re
from decimal import Decimal

from playwright.sync_api import expect
from sqlalchemy import select

from inventory_ai.extensions import db
from inventory_ai.models import Material, StockLevel
from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page
from tests.support.factories import warehouse

pytestmark = BROWSER_TESTS


def level(app, code: str = "M001", place: str = "WH01") -> Decimal:
    with app.app_context():
        return db.session.scalar(
            select(StockLevel.quantity)
            .join(Material, Material.id == StockLevel.material_id)
            .where(Material.code == code, StockLevel.warehouse_id == warehouse(place).id)
        )


def shown(quantity: Decimal) -> str:
    return format(quantity.normalize(), "f")


def test_the_confirmation_card_shows_the_levels_before_and_after_and_the_flags(page, live, new_user):
    log_in(page, live.url, new_user())
    now = level(live.app)
    ask(page, "高筋面粉出库20公斤")
    card = finished_answer(page).locator(".confirm")
    effect = card.locator("figure.effect")
    expect(effect.locator("figcaption")).to_have_text("库存变化")
    row = effect.locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("主仓库")
    expect(row.locator("td")).to_have_text([f"{shown(now)} kg", f"{shown(now - 20)} kg"])
    expect(effect.locator(".value")).to_have_text("金额 124.00 元")  # 20 kg x 6.20
    # M001's reorder point is 200 kg: what is left after is under it, and the card says so.
    expect(effect.locator(".flag.below_reorder_point_after")).to_have_text("变动后低于补货点（200 kg）")
    expect(row).to_have_class("below")
    card.get_by_role("button", name="拒绝").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    assert level(live.app) == now


def test_the_sign_off_page_shows_what_the_booking_would_do_when_it_is_opened(browser, live, new_user):
    requester = new_user(language="en")
    staff = open_page(browser, locale="en-GB")
    log_in(staff, live.url, requester)
    ask(staff, "book in 1000 kg of M001 in the main warehouse")  # 6,200 CNY: a second person signs off
    card = finished_answer(staff).locator(".confirm")
    expect(card.locator("figure.effect figcaption")).to_have_text("Effect on stock")
    card.get_by_role("button", name="Approve").click()
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")

    manager = open_page(browser)
    log_in(manager, live.url, "manager")
    now = level(live.app)
    manager.get_by_role("link", name=re.compile("待签核")).click()
    item = manager.locator(".signoff").filter(has_text=requester)
    effect = item.locator("figure.effect")
    expect(effect.locator("tbody tr th")).to_have_text("主仓库")
    expect(effect.locator("tbody tr td")).to_have_text([f"{shown(now)} kg", f"{shown(now + 1000)} kg"])
    expect(effect.locator(".value")).to_have_text("金额 6200.00 元")
    item.get_by_label("原因（可选）").fill("不需要这么多")
    item.get_by_role("button", name="驳回").click()
    expect(manager.locator(".flash")).to_contain_text("已驳回")
    assert level(live.app) == now
    manager.context.close()
    staff.context.close()
