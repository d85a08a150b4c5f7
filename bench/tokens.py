"""Prompt tokens (Qwen tokenizer shipped in the dashscope package) of tool definitions and results.

    .venv/bin/python bench/tokens.py
Goals (docs/benchmarks.md): all staff tool definitions <= 700 tokens; a 10-row search result <= 400.
"""

from __future__ import annotations

import logging

import dashscope
from _common import seeded_app

from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from tests.support.tool_context import context


def main() -> None:
    logging.disable(logging.INFO)
    tokenizer = dashscope.get_tokenizer("qwen-plus")

    def count(value) -> int:
        # Compact JSON: the tokens of the content, not of the serialiser's spacing.
        return len(tokenizer.encode(value if isinstance(value, str) else dumps(value)))

    app = seeded_app()
    with app.app_context():
        registry = manager().registry
        print("| tool | definition tokens |\n|---|---|")
        for tool in registry.all():
            spec = {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            print(f"| {tool.name} | {count(spec)} |")
        for role in ("warehouse_staff", "admin"):
            specs = [s.to_wire() for s in registry.toolbox_for(role, db.session).specs()]
            print(f"| **all {role} tools together** | **{count(specs)}** |")
        print("\n| result | tokens |\n|---|---|")
        samples = {
            "search_materials 面粉, 10 rows": ("search_materials", {"keyword": "面粉", "limit": 10}),
            "search_materials flour, 10 rows": ("search_materials", {"keyword": "flour", "limit": 10}),
            "list_low_stock, 10 rows": ("list_low_stock", {"limit": 10}),
            "get_material_detail M001": ("get_material_detail", {"material": "M001"}),
            "get_stock_movements M001, 10 rows": ("get_stock_movements", {"material": "M001", "limit": 10}),
            "get_inventory_stats": ("get_inventory_stats", {}),
        }
        for label, (name, arguments) in samples.items():
            result = registry.get(name).execute(arguments, context(db.session))
            print(f"| {label} | {count(dumps(result))} |")


if __name__ == "__main__":
    main()
