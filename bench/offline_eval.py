"""Accuracy of the offline provider on tests/offline_eval.py (first tool call and its arguments).

.venv/bin/python bench/offline_eval.py
"""

from __future__ import annotations

import logging

from _common import seeded_app

from inventory_ai.extensions import db
from tests.offline_eval import CASES
from tests.test_offline_provider import first_step, matches


def main() -> None:
    logging.disable(logging.INFO)
    app = seeded_app()
    with app.app_context():
        misses = []
        for text, tool, args in CASES:
            got_tool, got_args = first_step(db.session, text)
            if not matches(tool, args, got_tool, got_args):
                misses.append((text, tool, args, got_tool, got_args))
    zh = sum(1 for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c[0]))
    print(f"cases: {len(CASES)} ({zh} Chinese, {len(CASES) - zh} English)")
    print(
        f"accuracy (tool and arguments): {len(CASES) - len(misses)}/{len(CASES)} = {1 - len(misses) / len(CASES):.1%}"
    )
    for miss in misses:
        print("miss:", miss)


if __name__ == "__main__":
    main()
