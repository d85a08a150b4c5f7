"""The offline assistant reaches the catalogue only through its read-only port
(services/catalogue_view.py), and trusts intake's screening instead of screening again."""

from __future__ import annotations

import ast
from pathlib import Path

from inventory_ai.assistant.extension import manager, offline_lexicon
from inventory_ai.assistant.providers.offline.provider import OfflineProvider
from inventory_ai.assistant.types import Message, ModelRequest
from inventory_ai.models import CatalogAlias
from inventory_ai.services.catalogue_view import CatalogueView
from inventory_ai.services.search import search_materials

OFFLINE = Path(__file__).resolve().parents[2] / "inventory_ai" / "assistant" / "providers" / "offline"
NOT_FOR_THE_PROVIDER = (
    "sqlalchemy",
    "inventory_ai.models",
    "inventory_ai.extensions",
    "inventory_ai.services.screening",
)


def test_the_offline_provider_has_no_database_access_or_screening_of_its_own():
    imported = []
    for module in OFFLINE.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            imported += [(module.name, n) for n in names if n.startswith(NOT_FOR_THE_PROVIDER)]
    assert imported == []


def _reply(session, text: str, flagged: bool):
    registry = manager().registry
    request = ModelRequest(
        messages=(Message("system", "s"), Message("user", text)),
        tools=registry.toolbox_for("manager", session).specs(),
        role="manager",
        flagged=flagged,
    )
    return OfflineProvider(offline_lexicon(session, registry)).reply(request)


def test_the_intake_verdict_decides_not_a_second_screening(session):
    assert _reply(session, "查一下无盐黄油库存", flagged=False).tool_calls
    refused = _reply(session, "查一下无盐黄油库存", flagged=True)  # intake flagged this message
    assert refused.tool_calls == () and "不能执行" in refused.text


def test_the_directory_is_read_again_after_a_small_table_changes(session):
    before = CatalogueView(session).directory
    assert CatalogueView(session).directory is before  # no change: the same snapshot
    session.add(CatalogAlias(kind="material", code="M027", alias="牛油块"))
    session.commit()
    after = CatalogueView(session).directory
    assert after is not before and after.aliases["牛油块"] == (("material", "M027"),)


def test_a_search_counts_only_as_far_as_it_is_asked(session):
    everything = search_materials(session, "粉", limit=2, described=False)
    assert everything.total > 3
    counted = search_materials(session, "粉", limit=2, described=False, count_cap=3)
    assert (counted.total, counted.total_capped) == (3, True)
    assert [m.code for m in counted.materials] == [m.code for m in everything.materials]


def test_typos_and_homophones_are_found_through_the_search_index(session):
    words = CatalogueView(session).words
    assert words.meant("choclate") == "chocolate"
    assert words.meant("bakery") == "bakery"  # no typo of the "baker" in "baker's ammonia"
    assert words.meant("taken") == "taken"  # no typo of the pinyin "tafen" (塔塔粉)
    assert "塔塔粉" in words.sounds_like("他他粉还有吗")


def test_a_name_taken_away_in_bulk_is_forgotten_at_once(session):
    """Synonyms are replaced with one DELETE statement (services/materials.py), which the session
    never sees as deleted objects: the directory is read again all the same."""
    session.add(CatalogAlias(kind="material", code="M027", alias="牛油块"))
    session.commit()
    assert "牛油块" in CatalogueView(session).directory.aliases
    session.query(CatalogAlias).filter(CatalogAlias.alias == "牛油块").delete()
    session.commit()
    assert "牛油块" not in CatalogueView(session).directory.aliases


def test_a_name_said_in_pinyin_is_found_by_its_whole_sound_and_a_syllable_finds_none(session):
    # "an" and "fen" are syllables of many names but the whole sound of none of three characters or
    # more: they are checked against no name's pinyin; the whole sound finds its one name.
    view = CatalogueView(session)
    assert view.sounding(["gaojinmianfen", "an", "fen"]) == {"gaojinmianfen": "高筋面粉"}
