"""The offline assistant's accuracy on its evaluation sets, and its latency.

    .venv/bin/python bench/offline_eval.py [dev|test|both|NAME|PATH.jsonl] [-v] [--half odd|even] [--today 2026-11-27]
    .venv/bin/python bench/offline_eval.py dev --database sqlite:////work/scale/offline_100k.db

Each request runs through the real loop on a fresh seeded database as its role; the first tool call
(and a `then` call) is judged by meaning (tests/support/evaluation.py). Prints accuracy overall and
per expected tool, the confusion of first calls, and the p50/p95 time of one offline answer (wall
clock, and the process's CPU time, the steadier measure on a loaded machine, with the load average).
`--today` fixes the plant's date for the run (inventory_ai.services.clock.today): a set written
for a day says "this month" and "by Dec 1" of that day. `--database` runs on a database already
filled (bench/scale.py --fill, e.g. 100,000 materials: its answers' bookings stay in it) instead of
a fresh seeded one: the speed at that size; the accuracy is judged on the seeded catalogue only.
By default the process answers straight away, as a gunicorn worker does by default; `--warm` first
warms the app and freezes its objects as a worker does with INVENTORY_AI_OFFLINE_WARM_UP=1
(`offline_warm_up`, `gc.freeze()`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import time
from datetime import date

from _common import percentile, seeded_app
from eval_all import in_half

from inventory_ai.assistant.extension import manager, offline_lexicon, offline_warm_up
from inventory_ai.assistant.providers.offline.provider import OfflineProvider
from inventory_ai.assistant.types import Message, ModelRequest
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.services import clock
from tests.support.evaluation import evaluate, load, report


def understanding_times(cases: list[dict]) -> list[float]:
    """The offline provider alone: build its lexicon and decide the first step, per request."""
    registry = manager().registry
    users = {u.role: u for u in db.session.query(User)}
    out = []
    for case in cases:
        toolbox = registry.toolbox_for(users[case["role"]].role, db.session)
        request = ModelRequest(
            messages=(Message("system", "s"), Message("user", case["text"])),
            tools=toolbox.specs(),
            role=case["role"],
        )
        started = time.perf_counter()
        OfflineProvider(offline_lexicon(db.session, registry)).reply(request)
        out.append((time.perf_counter() - started) * 1000)
        db.session.rollback()
    return out


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description="The offline assistant's accuracy and latency.")
    parser.add_argument(
        "which", nargs="?", default="both", help="dev, test, both, a set's name or a .jsonl path"
    )
    parser.add_argument("-v", dest="verbose", action="store_true", help="print every miss")
    parser.add_argument("--half", choices=("odd", "even"), help="only the cases with odd or even ids")
    parser.add_argument("--today", type=date.fromisoformat, help="the plant's date for the run (YYYY-MM-DD)")
    parser.add_argument(
        "--database", help="a filled database's URL (bench/scale.py --fill) instead of a fresh one"
    )
    parser.add_argument(
        "--warm", action="store_true", help="warm-up and gc.freeze() before the first request"
    )
    options = parser.parse_args()
    if options.verbose and options.half == "even":
        parser.error("-v prints the misses; the even ids are scored only, never read")
    which, verbose = options.which, options.verbose
    if options.today:
        clock.today = lambda: options.today  # every "today" of the run: periods, due dates, the judge
    for name in ("dev", "test") if which == "both" else (which,):
        app = seeded_app(options.database)
        with app.app_context():
            app.config["CHAT_RATE_LIMIT"] = "100000 per minute"
            cases = [c for c in load(name) if options.half is None or in_half(c["id"], options.half)]
            cases.sort(key=lambda c: c["tool"] == "create_new_intent")  # teaching last
            if options.warm:  # as a warmed gunicorn worker starts (gunicorn.conf.py)
                offline_warm_up(app)
                gc.freeze()
            started = time.perf_counter()
            timings, cpu = [], []
            results = []
            for case in cases:
                t0, c0 = time.perf_counter(), time.process_time()
                results += evaluate(db.session, [case])
                timings.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
            print(f"== {name}: {len(cases)} requests, {time.perf_counter() - started:.1f} s")
            print(report(results))
            print(f"one answer, whole loop with its tools: p50 {percentile(timings, 50):.1f} ms, "
                  f"p95 {percentile(timings, 95):.1f} ms; its CPU p50 {percentile(cpu, 50):.1f} ms, "
                  f"p95 {percentile(cpu, 95):.1f} ms; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
            understood = understanding_times(cases)
            print(f"understanding one request (the provider's first step, its lexicon included): "
                  f"p50 {percentile(understood, 50):.1f} ms, p95 {percentile(understood, 95):.1f} ms")  # fmt: skip
            if verbose:
                for r in results:
                    if not r.ok:
                        print(f"  MISS {r.case['id']} [{r.case['role'][:7]}] {r.case['text']!r}: {r.why}")


if __name__ == "__main__":
    main()
