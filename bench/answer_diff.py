"""The offline assistant's answers dumped, to show that a change to its code leaves them unchanged.

    .venv/bin/python bench/answer_diff.py --out main.json [--today 2026-11-27] [SET|PATH.jsonl ...]
    .venv/bin/python bench/answer_diff.py --compare main.json branch.json

Every case of every set in tests/evaluation and every probe file under tests/offline (or only the
sets named) runs through the judge's real loop (tests/support/evaluation.py), each set on a fresh
seeded database as bench/eval_all.py runs it. The dump holds, keyed by set and case id, the calls
made (name, arguments, status, error type), whether the judge counted the case right, and a digest
of the reply and of the judge's reason, never their texts: held-out sets are dumped too.
`--compare` prints only the keys whose answers differ, how many of each set are in one dump only,
and the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
from collections import Counter
from datetime import date
from pathlib import Path

from _common import seeded_app

from inventory_ai.extensions import db
from inventory_ai.services import clock
from tests.support.evaluation import EVALUATION, evaluate, load

PROBES = Path(__file__).resolve().parent.parent / "tests" / "offline"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def every_set() -> list[str]:
    """The evaluation sets by name, then the probe files by path."""
    names = sorted(p.stem for p in EVALUATION.glob("*.jsonl"))
    return names + sorted(str(p) for p in PROBES.glob("*.jsonl"))


def dump(names: list[str]) -> dict[str, dict]:
    """Each case's answer, keyed "set/id"."""
    out = {}
    for name in names:
        app = seeded_app()
        with app.app_context():
            app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
            cases = load(name)
            cases.sort(key=lambda c: c["tool"] == "create_new_intent")  # teaching last, as judged
            label = Path(name).stem
            for result in evaluate(db.session, cases):
                out[f"{label}/{result.case['id']}"] = {
                    "calls": [
                        [c["name"], c["arguments"], c["status"], c["error_type"]] for c in result.calls
                    ],
                    "ok": result.ok,
                    "why": _digest(result.why),
                    "reply": _digest(result.reply),
                }
        print(f"{label}: {len(cases)} cases", flush=True)
    return out


def compare(first: dict, second: dict) -> int:
    """Print the keys that differ; the number of them."""
    differ = sorted(k for k in first.keys() & second.keys() if first[k] != second[k])
    only = sorted(first.keys() ^ second.keys())
    for key in differ:
        parts = [p for p in ("calls", "ok", "why", "reply") if first[key][p] != second[key][p]]
        print(f"differs {key}: {', '.join(parts)}")
    for name, count in sorted(Counter(k.split("/")[0] for k in only).items()):
        print(f"in one dump only: {count} of {name}")
    ok_first = sum(v["ok"] for k, v in first.items() if k in second)
    ok_second = sum(v["ok"] for k, v in second.items() if k in first)
    print(
        f"{len(first.keys() & second.keys())} cases in both, {len(differ)} differ, "
        f"{len(only)} in one only; right {ok_first} -> {ok_second}"
    )
    return len(differ) + len(only)


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", help="set names or .jsonl paths (all of them by default)")
    parser.add_argument("--out", help="where to write the dump")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two dumps to compare")
    parser.add_argument("--today", type=date.fromisoformat, default=date(2026, 11, 27))
    options = parser.parse_args()
    if options.compare:
        a, b = (json.loads(Path(p).read_text()) for p in options.compare)
        raise SystemExit(1 if compare(a, b) else 0)
    if not options.out:
        parser.error("--out or --compare")
    clock.today = lambda: options.today
    out = Path(options.out).resolve()  # seeded_app moves into a temporary folder
    names = [str(Path(n).resolve()) if n.endswith(".jsonl") else n for n in options.sets]
    answers = dump(names or every_set())
    out.write_text(json.dumps(answers, ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()
