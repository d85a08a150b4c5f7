"""A booking's description written again in the reader's language, and the stored sentence kept
when it cannot be (a material gone from the catalogue, a tool no longer registered)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from inventory_ai.assistant.described import described
from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from tests.support.scripted import booking


def record(arguments: dict, name: str = "record_stock_movement", approved: dict | None = None):
    return SimpleNamespace(
        name=name,
        arguments=json.dumps(arguments, ensure_ascii=False),
        approved_arguments=json.dumps(approved) if approved else None,
        description="出库 20 kg 高筋面粉 (M001)，主仓库",
    )


def test_a_booking_reads_in_each_readers_language(app):
    call = record(booking(20))
    assert described(manager().registry, db.session, call, "en") == (
        "Book out 20 kg Bread Flour (M001) in Main Warehouse"
    )
    assert described(manager().registry, db.session, call, "zh") == "出库 20 kg 高筋面粉 (M001)，主仓库"


def test_an_edited_booking_reads_as_approved(app):
    call = record(booking(20), approved={**booking(20), "quantity": 1500})
    assert described(manager().registry, db.session, call, "en").startswith("Book out 1,500 kg Bread Flour")


def test_what_cannot_be_written_again_keeps_the_stored_sentence(app):
    gone = record({**booking(20), "material": "不存在的原料"})
    assert described(manager().registry, db.session, gone, "en") == gone.description
    unknown_tool = record(booking(20), name="retired_tool")
    assert described(manager().registry, db.session, unknown_tool, "en") == unknown_tool.description
