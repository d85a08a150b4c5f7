"""Shared set-up for benchmarks: a migrated, seeded database in a temporary folder."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flask_migrate  # noqa: E402

from inventory_ai import create_app  # noqa: E402
from inventory_ai.config import config_for_tests  # noqa: E402
from inventory_ai.extensions import db  # noqa: E402
from inventory_ai.services.seeding import seed  # noqa: E402


def seeded_app(url: str | None = None):
    """An app on a fresh seeded database (SQLite in a temp dir unless a URL is given)."""
    if url is None:
        folder = tempfile.mkdtemp(prefix="iai-bench-")
        os.chdir(folder)
        url = f"sqlite:///{folder}/bench.db"
    app = create_app(config_for_tests(url))
    app.config["WTF_CSRF_ENABLED"] = False
    with app.app_context():
        flask_migrate.upgrade()
        seed(db.session, "bench-password")
    return app


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]
