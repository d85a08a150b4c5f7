"""The registry refuses, at start-up, a tool that would ship broken; each refusal says what is wrong."""

from __future__ import annotations

import pytest

from inventory_ai.assistant.registry import RegistryError, ToolRegistry
from inventory_ai.assistant.tools.base import ToolExecutor

GOOD_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}


def tool(**overrides) -> ToolExecutor:
    attributes = {
        "name": "count_pallets",
        "description": "counts pallets",
        "parameters": GOOD_SCHEMA,
        "labels": ("托盘", "Pallets"),
        "help": ("数托盘", "count pallets"),
        "execute": lambda self, arguments, context: {},
    }
    attributes.update(overrides)
    return type("Made", (ToolExecutor,), attributes)()


def test_a_well_formed_tool_registers():
    registry = ToolRegistry()
    registry.register(tool())
    assert registry.names() == {"count_pallets"}


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"name": "Count Pallets"}, "lower-case"),
        ({"name": ""}, "lower-case"),
        (
            {
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integr"}},
                    "additionalProperties": False,
                }
            },
            "invalid parameter schema",
        ),
        ({"parameters": {"type": "object", "properties": {}}}, "additionalProperties: false"),
        ({"parameters": {"type": "array", "additionalProperties": False}}, "must be an object"),
        ({"parameters": {**GOOD_SCHEMA, "required": ["m"]}}, "required fields not in properties: ['m']"),
        ({"description": "  "}, "needs a description"),
        ({"labels": ("托盘",)}, "needs labels"),
        ({"help": ("", "count")}, "needs help"),
    ],
)
def test_a_broken_tool_is_refused_with_the_reason(overrides, says):
    with pytest.raises(RegistryError, match=None) as refused:
        ToolRegistry().register(tool(**overrides))
    assert says in str(refused.value)


def test_a_tool_registered_twice_is_refused():
    registry = ToolRegistry()
    registry.register(tool())
    with pytest.raises(RegistryError, match="registered twice"):
        registry.register(tool())
