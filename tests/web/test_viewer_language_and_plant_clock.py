"""One language for the viewer, one clock for the plant: the page's language decides the page and the
descriptions written for it, the answer follows the question's language, specs read in English on an
English page; dates are the plant's days; figures have thousands separators; a chart's caption says
the period it shows."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect
from sqlalchemy import select, update

from inventory_ai.database import write_transaction
from inventory_ai.extensions import db
from inventory_ai.models import StockMovement, User
from inventory_ai.services import bookings, ledger
from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page

pytestmark = BROWSER_TESTS

PLANT = ZoneInfo("Asia/Shanghai")  # INVENTORY_AI_TIMEZONE's default, which the tests run with


def test_an_english_page_writes_the_booking_card_in_english_whatever_the_question(browser, live, new_user):
    page = open_page(browser, locale="en-GB")  # no language chosen: the browser's English
    log_in(page, live.url, new_user())
    expect(page.locator("html")).to_have_attribute("lang", "en")
    ask(page, "高筋面粉出库20公斤")  # asked in Chinese: the answer is Chinese, the page is English
    card = page.locator(".confirm")
    expect(card.locator(".description")).to_have_text("Book out 20 kg Bread Flour (M001) in Main Warehouse")
    card.get_by_role("button", name="Reject").click()
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "completed")
    page.context.close()


def test_an_english_question_on_the_chinese_page_gets_an_english_answer(browser, live, new_user):
    page = open_page(browser)
    log_in(page, live.url, new_user(language="zh"))
    ask(page, "what is running low?")
    answer = finished_answer(page)
    expect(answer.locator(".reply")).to_contain_text("below their reorder point")
    ask(page, "哪些原料库存不足？")  # and a Chinese one, a Chinese answer, on the same page
    expect(finished_answer(page).locator(".reply")).to_contain_text("低于补货点")
    page.context.close()


def test_a_spec_reads_in_english_on_an_english_page(browser, live, new_user):
    page = open_page(browser, locale="en-GB")
    log_in(page, live.url, new_user(language="en"))
    ask(page, "details of M001")
    reply = finished_answer(page).locator(".reply")
    expect(reply).to_contain_text("Spec: 25 kg/bag, protein ≥12.5%")
    expect(reply).not_to_contain_text("袋")
    page.context.close()


def test_a_manager_reads_a_chinese_requesters_sign_off_in_english(browser, live, new_user):
    requester = new_user(language="zh")
    staff = open_page(browser)
    log_in(staff, live.url, requester)
    ask(staff, "高筋面粉入库1000公斤")
    staff.locator(".confirm").get_by_role("button", name="确认").click()
    expect(staff.locator(".msg.assistant").last).to_have_attribute("data-status", "awaiting_signoff")
    staff.context.close()
    manager_name = new_user(role="warehouse_manager", language="en")
    manager = open_page(browser, locale="en-GB")
    log_in(manager, live.url, manager_name)
    manager.goto(f"{live.url}/approvals")
    item = manager.locator(".signoff").filter(has_text=requester)
    expect(item.locator(".description")).to_have_text("Book in 1,000 kg Bread Flour (M001) in Main Warehouse")
    expect(item).to_contain_text("6,200.00")
    item.get_by_role("button", name="Reject").click()
    expect(manager.locator(".flash")).to_contain_text("Rejected: Book in 1,000 kg Bread Flour (M001)")
    manager.context.close()


@pytest.fixture(scope="module")
def night_receipt(live):
    """1,234.5 kg of M003 booked in at 02:56 plant time three days ago (UTC: the day before):
    the plant day it was booked on."""
    day = datetime.now(PLANT).date() - timedelta(days=3)
    plant_moment = datetime.combine(day, time(2, 56), PLANT)
    assert plant_moment.astimezone(UTC).date() != day  # the case where UTC's day is another
    with live.app.app_context():
        user_id = db.session.scalar(select(User.id).where(User.username == "manager"))
        db.session.commit()
        booking = ledger.book(
            db.engine,
            bookings.load(
                {
                    "material": "M003",
                    "warehouse": "主仓库",
                    "movement_type": "inbound",
                    "quantity": "1234.5",
                    "unit": "kg",
                    "reason": "夜班收货",
                },
                user_id,
                None,
            ),
        )
        with write_transaction(db.engine) as session:  # booked then, as if at 02:56 that night
            session.execute(
                update(StockMovement)
                .where(StockMovement.id == booking.movement_id)
                .values(created_at=plant_moment.astimezone(UTC).replace(tzinfo=None))
            )
    return day


def movements_answer(browser, live, new_user, question: str = "中筋面粉最近30天的出入库"):
    page = open_page(browser)
    log_in(page, live.url, new_user(language="zh"))
    ask(page, question)
    return page, finished_answer(page)


def test_a_movement_booked_after_midnight_shows_the_plant_day_in_a_chat_table(
    browser, live, new_user, night_receipt
):
    page, answer = movements_answer(browser, live, new_user)
    row = answer.locator("tbody tr").filter(has_text=re.compile(r"1,?234\.5"))
    expect(row.locator("td").first).to_have_text(night_receipt.isoformat())
    page.context.close()


def test_figures_in_a_chat_table_have_thousands_separators(browser, live, new_user, night_receipt):
    page, answer = movements_answer(browser, live, new_user)
    expect(answer.locator("tbody tr").filter(has_text="1,234.5")).to_have_count(1)
    page.context.close()


def test_a_charts_caption_states_the_period_it_shows(browser, live, new_user, night_receipt):
    page, answer = movements_answer(browser, live, new_user)  # a 30-day question: a 30-day chart
    caption = answer.locator("figure.chart figcaption")
    today = datetime.now(PLANT).date()
    expect(caption).to_contain_text("30 天")
    expect(caption).to_contain_text(f"{(today - timedelta(days=29)).isoformat()} 至 {today.isoformat()}")
    page.context.close()
