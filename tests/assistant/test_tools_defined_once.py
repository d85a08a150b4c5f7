"""A tool is defined in one place (assistant/tools/): whatever else names it is checked against the registry."""

from __future__ import annotations

import json
from pathlib import Path

from inventory_ai.assistant.extension import build_registry
from inventory_ai.assistant.providers.offline.answers import _WRITERS
from inventory_ai.web.i18n import strings

SEED_INTENTS = Path(__file__).parents[2] / "seed_data" / "intents.json"


def test_every_tool_has_its_words_for_people_in_both_languages():
    for tool in build_registry().all():
        assert all(tool.labels) and all(tool.help), tool.name
        assert strings("zh")[f"tool.{tool.name}"] == tool.labels[0]
        assert strings("en")[f"tool.{tool.name}"] == tool.labels[1]


def test_the_offline_assistant_can_answer_with_every_tool_and_nothing_else():
    assert set(_WRITERS) == build_registry().names()


def test_seeded_intents_route_only_to_registered_tools_and_reach_every_tool():
    names = build_registry().names()
    routed = {intent["tool_name"] for intent in json.loads(SEED_INTENTS.read_text())}
    assert routed <= names
    # A lookup is a search, or the detail when the request names exactly one material.
    assert names - routed <= {"get_material_detail"}
