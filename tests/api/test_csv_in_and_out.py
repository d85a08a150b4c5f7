"""CSV in and out. The import: a row with more fields than the header, or a header naming a column
twice, is 422 (was silently dropped or read from the last copy); every row is checked first holding
no write lock, then rows are written in short batches, so a writer behind an import waits for a batch,
not for the whole file. Out: a cell starting with = + - @ is never a formula in a spreadsheet."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from inventory_ai.extensions import db
from inventory_ai.models import Material
from inventory_ai.services.materials import BATCH_ROWS
from inventory_ai.services.reports import format_report

HEADER = "code,name_zh,name_en,unit,spec,category,supplier,reorder_point,unit_cost\n"


def post_csv(client, admin, text: str):
    return client.post(
        "/api/v1/admin/materials/import", data=text.encode(), content_type="text/csv", headers=admin
    )


def materials(session) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(Material))


def test_a_row_with_more_fields_than_the_header_is_422_and_nothing_is_imported(client, admin, session):
    before = materials(session)
    response = post_csv(client, admin, HEADER + "M960,甲,A,kg,,FL,,1,1\nM961,乙,B,kg,,FL,,1,1,surplus,more\n")
    assert response.status_code == 422, response.json
    assert {(r["line"], r["field"]) for r in response.json["error"]["details"]["rows"]} == {(3, "(row)")}
    assert materials(session) == before


def test_a_header_naming_a_column_twice_is_422(client, admin, session):
    before = materials(session)
    header = "code,name_zh,name_en,unit,category,unit_cost,unit_cost\n"
    response = post_csv(client, admin, header + "M962,甲,A,kg,FL,1,999\n")
    assert response.status_code == 422 and "unit_cost" in response.json["error"]["message"]
    assert materials(session) == before


def test_an_import_is_checked_before_any_write_and_written_in_batches(client, admin, session):
    rows = 2 * BATCH_ROWS + 7
    text = HEADER + "".join(f"M{7000 + i},料{i},Part {i},kg,,FL,,1,1\n" for i in range(rows))
    statements, written = [], []

    def seen(_conn, _cursor, statement, *_args):
        statements.append(statement.split()[0].upper())

    def flushing(session, _context, _instances):  # materials written by each flush
        written.append(sum(isinstance(o, Material) for o in session.new))

    event.listen(db.engine, "before_cursor_execute", seen)
    event.listen(Session, "before_flush", flushing)
    try:
        response = post_csv(client, admin, text)
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
        event.remove(Session, "before_flush", flushing)
    assert response.status_code == 201 and response.json["imported"] == rows
    assert [n for n in written if n] == [BATCH_ROWS, BATCH_ROWS, 7]  # three short writes
    first_insert = statements.index("INSERT")
    assert statements[:first_insert].count("SELECT") >= rows  # every row checked before it


@pytest.mark.parametrize("cell", ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd"])
def test_a_report_cell_that_a_spreadsheet_would_run_is_written_as_text(cell):
    out = format_report("t", [{"name": cell, "=col": 1, "delta": "-20", "n": -3}], fmt="csv")
    header, row = out.splitlines()[:2]
    assert header.startswith("name,'=col,")
    assert row.split(",")[0].lstrip('"').startswith("'")
    assert row.endswith(",-20,-3")  # plain numbers stay numbers
