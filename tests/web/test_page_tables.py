"""Result tables people take elsewhere: "show all" kept across a reload, a table copied (tab-separated,
as spreadsheets paste it) or downloaded as CSV, with every cell a spreadsheet would run as a formula
(= + - @) neutralised, and plain numbers left numbers."""

from __future__ import annotations

import csv
import io

from playwright.sync_api import expect

from tests.support.browser import BROWSER_TESTS, ask, finished_answer, log_in, open_page
from tests.support.scripted import ScriptedProvider, answer, call, calls

pytestmark = BROWSER_TESTS


def test_show_all_survives_a_reload(page, live):
    log_in(page, live.url)
    ask(page, "帮我查找面粉原料")
    found = finished_answer(page)
    found.get_by_role("link", name="显示全部 13 条").click()
    expect(found.locator("table.results tbody tr")).to_have_count(13)
    page.reload()
    again = page.locator(".msg.assistant").last
    expect(again.locator("table.results tbody tr")).to_have_count(13)
    expect(again.get_by_role("link", name="显示全部 13 条")).to_have_count(0)


ROWS = [
    {"编码": "M001", "备注": '=HYPERLINK("http://evil.example","点我")', "变动": -20, "经办": "@admin"},
    {"编码": "M002", "备注": "+cmd|' /C calc'!A0", "变动": 3.5, "经办": "-2+3"},
]


def test_a_table_is_copied_and_downloaded_as_csv_with_formulas_neutralised(browser, live, models):
    models(
        lambda _session: (
            ScriptedProvider(
                calls(call("format_report", {"title": "盘点差异", "rows": ROWS})), answer("好了")
            ),
        )
    )
    page = open_page(browser, accept_downloads=True)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    log_in(page, live.url)
    ask(page, "把差异做成报表")
    report = finished_answer(page).locator("figure.report")
    expect(report.locator("tbody tr")).to_have_count(2)
    with page.expect_download() as caught:
        report.get_by_role("button", name="下载 CSV").click()
    download = caught.value
    assert download.suggested_filename.startswith("盘点差异") and download.suggested_filename.endswith(".csv")
    raw = download.path().read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # spreadsheets read it as UTF-8
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows == [
        ["编码", "备注", "变动", "经办"],
        ["M001", '\'=HYPERLINK("http://evil.example","点我")', "-20", "'@admin"],
        ["M002", "'+cmd|' /C calc'!A0", "3.5", "'-2+3"],
    ]
    report.get_by_role("button", name="复制表格").click()
    expect(report.get_by_role("button", name="✓ 已复制")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.split("\n")[1].split("\t") == ["M001", rows[1][1], "-20", "'@admin"]
    page.context.close()
