"""Fixtures: small and named for what they give (databases, an app, clients, a logged-in helper).
Helpers that are not fixtures live in tests/support/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inventory_ai import create_app
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.models import User
from tests.support.clients import AuthActions, FreshUserClient, bearer
from tests.support.dashscope_stub import DashScopeStub
from tests.support.databases import TEST_DATABASE_URL, PostgresDatabases, SqliteDatabases, let_go
from tests.support.passwords import quick_hashes
from tests.support.scripted import close_overrides


@pytest.fixture(scope="session", autouse=True)
def quick_password_hashes():
    """Passwords hashed in a test's time for the whole run (tests/support/passwords.py)."""
    with quick_hashes():
        yield


@pytest.fixture(scope="session")
def databases(tmp_path_factory, quick_password_hashes):
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


@pytest.fixture
def app(database_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # instance/ goes to a temporary folder
    app = create_app(config_for_tests(database_url))
    app.test_client_class = FreshUserClient
    with app.app_context():
        yield app
    close_overrides(app)
    let_go(app)


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
        let_go(app)
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


@pytest.fixture
def auth(client):
    return AuthActions(client)


@pytest.fixture
def token(session):
    """`token(username)`: the headers of a script acting as that user with an API token."""

    def make(username: str) -> dict:
        return bearer(session, username)

    return make


@pytest.fixture
def admin(token):
    """The headers of an admin's script (an API token with the `admin` scope)."""
    return token("admin")


@pytest.fixture
def user(session):
    def get(username: str) -> User:
        return session.query(User).filter_by(username=username).one()

    return get


@pytest.fixture
def stub():
    """A local server that speaks DashScope's protocol; the real SDK is pointed at it."""
    with DashScopeStub() as server:
        yield server


@pytest.fixture
def qwen_app(app_with, stub):
    """`qwen_app(**settings)`: an app on a fresh database whose model is Qwen through the real SDK,
    answered by `stub`. No fallback unless a test names one: most are about the model failing."""

    def make(**settings):
        config = config_for_tests("")
        config.llm_provider, config.dashscope_api_key, config.dashscope_base_url = (
            "dashscope",
            "sk-test",
            stub.base_url,
        )
        config.model_backoff_seconds = 0.01
        config.llm_fallback = ()
        for key, value in settings.items():
            setattr(config, key, value)
        return app_with(config)

    return make
