"""Every request's answer, dumped for a before/after diff: a speed change must not change answers.

    PYTHONPATH=. .venv/bin/python bench/first_steps.py OUT.jsonl dev dev_hardtail outside_ga outside_gc

Each request of the named sets runs through the real loop on a fresh seeded database (as
bench/eval_all.py does, `--today` 2026-11-27 by default); one JSON line per request: its set, id,
the tool calls with their arguments and statuses, and the reply. Held-out sets must not be named
here (their answers would be read); score them with bench/eval_all.py. `--warm` first warms the
app as a gunicorn worker does (`offline_warm_up`): its lines must be the same as without.
"""

from __future__ import annotations

import argparse
import json
import logging
from datetime import date

from _common import seeded_app

from inventory_ai.assistant.extension import offline_warm_up
from inventory_ai.extensions import db
from inventory_ai.services import clock
from tests.support.evaluation import evaluate, load


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the JSON lines file to write")
    parser.add_argument("sets", nargs="+", help="set names")
    parser.add_argument("--today", type=date.fromisoformat, default=date(2026, 11, 27))
    parser.add_argument("--warm", action="store_true", help="warm up as a gunicorn worker does first")
    options = parser.parse_args()
    clock.today = lambda: options.today
    with open(options.out, "w") as out:
        for name in options.sets:
            app = seeded_app()
            if options.warm:  # the warmed worker must answer as a cold one does
                offline_warm_up(app)
            with app.app_context():
                app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
                cases = sorted(load(name), key=lambda c: c["tool"] == "create_new_intent")
                for result in evaluate(db.session, cases):
                    line = {
                        "set": name,
                        "id": result.case.get("id"),
                        "calls": [(c["name"], c["arguments"], c["status"]) for c in result.calls],
                        "reply": result.reply,
                        "ok": result.ok,
                    }
                    out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                print(f"{name}: {len(cases)} requests", flush=True)


if __name__ == "__main__":
    main()
