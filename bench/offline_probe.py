"""Where one offline answer's understanding spends its time: per request, the provider's first step
(as bench/offline_eval.py's "understanding" row) with the statements it ran, by count and time.

    PYTHONPATH=. .venv/bin/python bench/offline_probe.py --database sqlite:///DIR/copy.db \\
        "unsalted butter sheets" "dark chocolate chips for cookies"
    PYTHONPATH=. .venv/bin/python bench/offline_probe.py --database ... --set dev --top 15

Each request is understood `--repeat` times after one warm-up; the row is the best time (CPU the
least disturbed on a shared machine) and the statements of one run. With `--set`, the slowest
requests of an evaluation set the project may read (never a held-out one). `--statements` prints
each statement of the slowest run with its time."""

from __future__ import annotations

import argparse
import logging
import time
from collections import Counter

from _common import seeded_app
from sqlalchemy import event

from inventory_ai.assistant.extension import manager, offline_lexicon
from inventory_ai.assistant.providers.offline.provider import OfflineProvider
from inventory_ai.assistant.types import Message, ModelRequest
from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.evaluation import load

HELD_OUT = ("outside_g", "blind", "test", "dev_weak", "dev_tail")  # the last two: even ids are held out


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("texts", nargs="*")
    parser.add_argument("--database")
    parser.add_argument("--set", help="an evaluation set the project may read (dev, dev_hardtail, ...)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--role", default="admin")
    parser.add_argument("--statements", action="store_true")
    options = parser.parse_args()
    if options.set and options.set.startswith(HELD_OUT) and options.set != "outside_ga":
        parser.error("a held-out set is scored only, never read")
    app = seeded_app(options.database)
    with app.app_context():
        registry = manager().registry
        users = {u.role: u for u in db.session.query(User)}
        cases = [(options.role, t) for t in options.texts]
        if options.set:
            cases += [(c["role"], c["text"]) for c in load(options.set) if c["tool"] != "create_new_intent"]
        ran: list[tuple[str, float]] = []

        @event.listens_for(db.engine, "before_cursor_execute")
        def before(conn, cursor, statement, parameters, context, executemany):
            conn.info["t0"] = time.perf_counter()

        @event.listens_for(db.engine, "after_cursor_execute")
        def after(conn, cursor, statement, parameters, context, executemany):
            ran.append((statement, (time.perf_counter() - conn.info["t0"]) * 1000))

        def understand(role: str, text: str):
            toolbox = registry.toolbox_for(users[role].role, db.session)
            request = ModelRequest(
                messages=(Message("system", "s"), Message("user", text)), tools=toolbox.specs(), role=role
            )
            ran.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            OfflineProvider(offline_lexicon(db.session, registry)).reply(request)
            wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
            db.session.rollback()
            return wall, cpu, list(ran)

        understand("admin", "查一下面粉库存")  # the process's first answer: the intent model's fit
        rows = []
        for role, text in cases:
            understand(role, text)
            runs = [understand(role, text) for _ in range(options.repeat)]
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            statements = runs[-1][2]
            rows.append((wall, cpu, text, statements))
        rows.sort(key=lambda r: -r[0])
        print("| request | wall ms (best) | CPU ms (best) | statements | their ms |")
        print("|---|---|---|---|---|")
        for wall, cpu, text, statements in rows[: options.top if options.set else None]:
            spent = sum(s[1] for s in statements)
            print(f"| {text} | {wall:.1f} | {cpu:.1f} | {len(statements)} | {spent:.1f} |")
            if options.statements:
                shapes = Counter()
                for statement, ms in statements:
                    shapes[" ".join(statement.split())[:150]] += ms
                for shape, ms in shapes.most_common(8):
                    print(f"    {ms:7.2f} ms  {shape}")


if __name__ == "__main__":
    main()
