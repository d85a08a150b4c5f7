"""Fixtures of the offline assistant's tests: one app per module, its database put back to the seeded
template before every test. The suite's own `app` makes a new app per test (~0.2 s, most of it the
OpenAPI document and the tool schemas), and this folder has over a thousand tests that ask one thing
each. They change the app's database, never the app: what else an answer leaves behind in the
process (rate-limit counts, cached tokens, settings and catalogue snapshots) is cleared with it."""

from __future__ import annotations

import pytest

from inventory_ai import create_app
from inventory_ai.assistant.extension import EXTENSION_KEY
from inventory_ai.assistant.recovery import HEARTBEATS
from inventory_ai.auth import forget_tokens
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db, limiter
from inventory_ai.services.catalogue_view import MARKER
from tests.support.clients import FreshUserClient
from tests.support.databases import let_go
from tests.support.scripted import close_overrides


@pytest.fixture(scope="module")
def module_app(databases, tmp_path_factory):
    url = databases.fresh()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("offline"))  # its instance/ folder
        made = create_app(config_for_tests(url))
    made.test_client_class = FreshUserClient
    made.config["TEST_DATABASE_URL"] = url
    yield made
    let_go(made)
    databases.drop(url)


@pytest.fixture
def app(module_app, databases, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with module_app.app_context():
        db.session.remove()
        HEARTBEATS.forget(db.engine)
        db.engine.dispose()
        databases.restore(module_app.config["TEST_DATABASE_URL"])
        limiter.reset()  # every app's limits: the suite's apps share the extension's storage
        forget_tokens()
        module_app.extensions[EXTENSION_KEY].registry.settings_changed()
        ChangeMarker(module_app.instance_path, MARKER).mark()  # the catalogue is read again
        yield module_app
        close_overrides(module_app)
        db.session.remove()
