"""Two app hosts on one PostgreSQL and one Redis, for the tests in this folder (`make test-hosts`).

Not part of `make test`: pyproject.toml's `norecursedirs` leaves this folder out of a run that is
not pointed at it. One deployment serves the whole run (starting two gunicorn masters takes a
while): a fresh PostgreSQL database of the run's own (cloned from a seeded template), a
redis-server of its own, the DashScope stub in this process (the real SDK in the hosts talks to it),
and hosts `a` and `b` (tests/support/hosts.py). Each test works with people of its own, so the
limits one test fills leave the others alone.
"""

from __future__ import annotations

import itertools
import os
import threading

import psycopg
import pytest

from tests.support.dashscope_stub import DashScopeStub, Reply, tool_call
from tests.support.databases import PASSWORD, PostgresDatabases
from tests.support.hosts import Deployment, Host, Person, Script, several_hosts

POSTGRES = os.environ.get(
    "INVENTORY_AI_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
# What every host is configured with: limits small enough to fill in a test, a budget a test can
# use up with one answer (its model reports a large usage) and nobody else comes near.
CHAT_LIMIT = 10  # per user per minute
DAILY_TOKEN_BUDGET = 2000
HOST_ENV = {
    "INVENTORY_AI_CHAT_RATE_LIMIT": f"{CHAT_LIMIT} per minute",
    "INVENTORY_AI_DAILY_TOKEN_BUDGET": str(DAILY_TOKEN_BUDGET),
    "INVENTORY_AI_LLM_FALLBACK": "offline",
    # The answer deadline, heartbeat and staleness stay at their defaults: the crash test checks
    # the 60 s the contract promises as deployed.
}
PEOPLE_PASSWORD = "several-hosts-password"
_described: list[str] = []


class Site:
    """The deployment as the tests use it: hosts a and b, the model, the database, people."""

    def __init__(self, deployment: Deployment, stub: DashScopeStub):
        self.deployment = deployment
        self.a, self.b = deployment.hosts
        self.stub = stub
        self.chat_limit, self.daily_token_budget = CHAT_LIMIT, DAILY_TOKEN_BUDGET
        self.admin = Person("admin", PASSWORD, address="198.51.100.2")
        assert self.admin.login(self.a).status_code == 200
        self._names = itertools.count(1)
        self._addresses = itertools.count(10)

    def person(self, role: str = "warehouse_staff", log_in_on: Host | None = None) -> Person:
        """A new user of this role (created by the admin on host a), logged in on `log_in_on`.
        Each has an address of their own: the login limits per address stay theirs."""
        username = f"{role.split('_')[-1]}{next(self._names):03d}"
        created = self.admin.post(
            self.a,
            "/api/v1/admin/users",
            json={"username": username, "password": PEOPLE_PASSWORD, "role": role},
        )
        assert created.status_code == 201, created.text
        person = Person(username, PEOPLE_PASSWORD, address=f"198.51.100.{next(self._addresses)}")
        person.id = created.json()["id"]
        if log_in_on is not None:
            assert person.login(log_in_on).status_code == 200
        return person

    def token_for(self, person: Person, host: Host) -> tuple[int, Script]:
        issued = person.post(host, "/api/v1/auth/tokens", json={"name": "hosts", "valid_days": 1})
        assert issued.status_code in (200, 201), issued.text
        body = issued.json()
        return body["id"], Script(body["token"], address=person.address)

    def redis(self):
        import redis

        return redis.Redis.from_url(self.deployment.redis_url)

    def sql(self, statement: str, **params) -> list[tuple]:
        with psycopg.connect(
            self.deployment.database_url.replace("postgresql+psycopg://", "postgresql://")
        ) as conn:
            return conn.execute(statement, params).fetchall()


class Model:
    """The stub's behaviour for one test (by default a short reply to everything)."""

    def __init__(self, stub: DashScopeStub):
        self.stub = stub
        self.released = threading.Event()  # ends every slow answer still waiting in the stub
        self.waiting = 0  # slow answers the stub is holding now
        self._lock = threading.Lock()

    def answers(self, behaviour) -> None:
        self.stub.default = behaviour

    def calls(self, name: str, arguments: dict, then: str = "已处理。"):
        """Asks for one tool call when a person writes, and answers `then` with its result."""

        def behaviour(body: dict) -> Reply:
            if body["input"]["messages"][-1]["role"] == "user":
                return Reply(tool_calls=[tool_call(name, arguments)])
            return Reply(content=then)

        return behaviour

    def slow(self, content: str = "慢慢说完了。"):
        """A reply that comes when the test releases it (or after two minutes): keeps an answer
        `running` for as long as a test needs."""

        def wait(_body: dict) -> Reply:
            with self._lock:
                self.waiting += 1
            try:
                self.released.wait(timeout=120)
            finally:
                with self._lock:
                    self.waiting -= 1
            return Reply(content=content)

        return wait


@pytest.fixture(scope="session")
def site(request, tmp_path_factory):
    try:
        psycopg.connect(POSTGRES.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=3).close()
    except psycopg.Error:
        pytest.skip(f"PostgreSQL does not answer at {POSTGRES}: the hosts need a database they share")
    databases = PostgresDatabases(POSTGRES)
    url = databases.fresh()
    folder = tmp_path_factory.mktemp("hosts")  # the hosts' folders and logs, kept for the last few runs
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    try:
        with (
            DashScopeStub(default=Reply(content="好的。")) as stub,
            several_hosts(folder, url, stub.server.server_address[1], env=HOST_ENV) as deployment,
        ):
            _described.append(deployment.describe())
            if reporter is not None:
                reporter.write_line(f"\nhosts: {deployment.describe()}; logs in {folder}")
            made = Site(deployment, stub)
            yield made
    finally:
        databases.drop(url)
        databases.close()


@pytest.fixture
def model(site):
    """The model for this test; afterwards the default reply again, and no slow answer left."""
    behaviour = Model(site.stub)
    site.stub.script.clear()
    yield behaviour
    behaviour.released.set()
    site.stub.script.clear()
    site.stub.default = Reply(content="好的。")


def pytest_terminal_summary(terminalreporter):
    for line in _described:
        terminalreporter.write_line(f"hosts: {line}")
