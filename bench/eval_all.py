"""Every evaluation set's score, one line each (no misses printed, no timing).

    .venv/bin/python bench/eval_all.py [--today 2026-11-27] [--by-class] [--half odd|even] [SET ...]

For held-out sets, whose cases must not be read: only their counts are printed (with --by-class,
also per `class` field of the cases, for sets whose writers gave one). `--half` scores only the
cases whose id ends in an odd or an even number: the halves of a set whose odd ids are read and tuned on
and whose even ids are only scored.
"""

from __future__ import annotations

import argparse
import logging
from datetime import date
from pathlib import Path

from _common import seeded_app

from inventory_ai.extensions import db
from inventory_ai.services import clock
from tests.support.evaluation import EVALUATION, evaluate, load


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", help="set names (all of tests/evaluation by default)")
    parser.add_argument("--by-class", action="store_true", help="counts per case class too")
    parser.add_argument("--today", type=date.fromisoformat, default=date(2026, 11, 27))
    parser.add_argument("--half", choices=("odd", "even"), help="only the cases with odd or even ids")
    options = parser.parse_args()
    clock.today = lambda: options.today
    names = options.sets or sorted(p.stem for p in Path(EVALUATION).glob("*.jsonl"))
    for name in names:
        app = seeded_app()
        with app.app_context():
            app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
            cases = [c for c in load(name) if options.half is None or in_half(c["id"], options.half)]
            cases.sort(key=lambda c: c["tool"] == "create_new_intent")
            results = evaluate(db.session, cases)
            right = sum(r.ok for r in results)
            label = name if options.half is None else f"{name} ({options.half} ids)"
            print(f"{label}: {right}/{len(cases)} = {100 * right / len(cases):.1f}%", flush=True)
            if options.by_class:
                classes: dict[str, list[bool]] = {}
                for result in results:
                    classes.setdefault(result.case.get("class", "-"), []).append(result.ok)
                print("  " + ", ".join(f"{c} {sum(oks)}/{len(oks)}" for c, oks in sorted(classes.items())))


def in_half(case_id: str, half: str) -> bool:
    """Whether a case id ("DW017") ends in an odd or an even number."""
    digits = case_id[len(case_id.rstrip("0123456789")) :]
    return int(digits) % 2 == (1 if half == "odd" else 0)


if __name__ == "__main__":
    main()
