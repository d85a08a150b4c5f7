"""Fixtures: a seeded template database built once per session, and a fresh copy for every test.

SQLite (default): the template is a file, copied per test. PostgreSQL (when
INVENTORY_AI_TEST_DATABASE_URL is set): the template is a database, cloned per test with
CREATE DATABASE … TEMPLATE. Either way each test starts from the same seeded state.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import flask_migrate
import pytest
from flask import g, has_app_context
from flask.testing import FlaskClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import User
from inventory_ai.services.seeding import seed

PASSWORD = "demo-password"
TEST_DATABASE_URL = os.environ.get("INVENTORY_AI_TEST_DATABASE_URL")
_counter = itertools.count()


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

    def close(self) -> None:
        self._exec(f'DROP DATABASE IF EXISTS "{self.template_name}" WITH (FORCE)')
        self.admin.dispose()


@pytest.fixture(scope="session")
def databases(tmp_path_factory):
    dbs = (
        PostgresDatabases(TEST_DATABASE_URL)
        if TEST_DATABASE_URL
        else SqliteDatabases(tmp_path_factory.mktemp("db"))
    )
    yield dbs
    dbs.close()


@pytest.fixture
def database_url(databases) -> Iterator[str]:
    url = databases.fresh()
    yield url
    databases.drop(url)


class FreshUserClient(FlaskClient):
    """The fixture keeps an app context pushed for db access, and Flask-Login caches the user in
    `g`; a real server starts every request without it, so this client does too."""

    def open(self, *args, **kwargs):
        if has_app_context():
            g.pop("_login_user", None)
        return super().open(*args, **kwargs)


@pytest.fixture
def app(database_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # instance/ goes to a temporary folder
    app = create_app(config_for_tests(database_url))
    app.test_client_class = FreshUserClient
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def app_with(databases, tmp_path, monkeypatch):
    """Apps beyond the default one: `app_with(config=None, url=None)` on a fresh seeded database
    (or a given one), disposed and dropped after the test. Another process, in effect."""
    monkeypatch.chdir(tmp_path)
    made, urls = [], []

    def make(config=None, url=None):
        if url is None:
            url = databases.fresh()
            urls.append(url)
        config = config or config_for_tests(url)
        config.database_url = url
        app = create_app(config)
        app.test_client_class = FreshUserClient
        made.append(app)
        return app

    yield make
    for app in made:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    for url in urls:
        databases.drop(url)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def session(app):
    return db.session


class AuthActions:
    """Log a test client in through the API and send the CSRF token on its later writes."""

    def __init__(self, client):
        self.client = client

    def login(self, username: str = "staff", password: str = PASSWORD):
        response = self.client.post("/api/v1/auth/login", json={"username": username, "password": password})
        if response.status_code == 200:
            self.client.environ_base["HTTP_X_CSRFTOKEN"] = response.json["csrf_token"]
        return response

    def logout(self):
        return self.client.post("/api/v1/auth/logout")


@pytest.fixture
def auth(client):
    return AuthActions(client)


@pytest.fixture
def user(session):
    def get(username: str) -> User:
        return session.query(User).filter_by(username=username).one()

    return get
