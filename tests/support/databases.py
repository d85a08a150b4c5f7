"""Seeded test databases: a template built once per session, and a fresh copy for every test.

SQLite (default): the template is a file, copied per test. PostgreSQL (when
INVENTORY_AI_TEST_DATABASE_URL is set): the template is a database, cloned per test with
CREATE DATABASE … TEMPLATE. Either way each test starts from the same seeded state.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import flask_migrate
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from inventory_ai import create_app
from inventory_ai.assistant.recovery import HEARTBEATS
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.services.seeding import seed

PASSWORD = "demo-password"
TEST_DATABASE_URL = os.environ.get("INVENTORY_AI_TEST_DATABASE_URL")
_counter = itertools.count()


def let_go(app) -> None:
    """An app's end in a test: its session closed, its engine no longer used by the heartbeat
    thread (which may be in the middle of a beat on it), then disposed. A connection opened after
    the dispose would stay open in a pool nobody closes, and on PostgreSQL its ResourceWarning, when
    the pool is collected, fails whichever test is running then."""
    with app.app_context():
        db.session.remove()
        HEARTBEATS.forget(db.engine)
        db.engine.dispose()


def build_seeded(url: str) -> None:
    app = create_app(config_for_tests(url))
    with app.app_context():
        flask_migrate.upgrade()
        seed(db.session, PASSWORD)
        if db.engine.dialect.name == "sqlite":
            db.session.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        db.session.remove()
        db.engine.dispose()


class SqliteDatabases:
    def __init__(self, root: Path):
        self.root = root
        self.template = root / "template.db"
        build_seeded(f"sqlite:///{self.template}")

    def fresh(self) -> str:
        path = self.root / f"test_{next(_counter)}.db"
        shutil.copyfile(self.template, path)
        return f"sqlite:///{path}"

    def drop(self, url: str) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(make_url(url).database + suffix).unlink(missing_ok=True)

    def restore(self, url: str) -> None:
        """The database at `url` as the template has it again (nothing may be connected to it)."""
        self.drop(url)
        shutil.copyfile(self.template, make_url(url).database)

    def close(self) -> None:
        pass


class PostgresDatabases:
    def __init__(self, url: str):
        self.url = make_url(url)
        self.admin = create_engine(self.url, isolation_level="AUTOCOMMIT")
        self.template_name = f"iai_tpl_{os.getpid()}"
        self._exec(f'DROP DATABASE IF EXISTS "{self.template_name}"')
        self._exec(f'CREATE DATABASE "{self.template_name}"')
        build_seeded(self._url_for(self.template_name))

    def _url_for(self, name: str) -> str:
        return self.url.set(database=name).render_as_string(hide_password=False)

    def _exec(self, sql: str) -> None:
        with self.admin.connect() as conn:
            conn.execute(text(sql))

    def fresh(self) -> str:
        name = f"iai_t_{os.getpid()}_{next(_counter)}"
        self._exec(f'CREATE DATABASE "{name}" TEMPLATE "{self.template_name}"')
        return self._url_for(name)

    def drop(self, url: str) -> None:
        self._exec(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')

    def restore(self, url: str) -> None:
        """The database at `url` as the template has it again, under the same name."""
        self.drop(url)
        self._exec(f'CREATE DATABASE "{make_url(url).database}" TEMPLATE "{self.template_name}"')

    def close(self) -> None:
        self._exec(f'DROP DATABASE IF EXISTS "{self.template_name}" WITH (FORCE)')
        self.admin.dispose()
