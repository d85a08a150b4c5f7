"""The API keeps to its OpenAPI document: errors are JSON (with Allow on a 405), schemathesis's calls and
sequences of calls never error and get what the document says, and its links lead to its operations."""

from __future__ import annotations

import os
from collections import Counter

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import select

from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import ApiToken, User
from tests.support.databases import let_go


def test_api_errors_are_json_with_allow_on_405(client, admin):
    response = client.put("/api/v1/admin/materials", headers=admin)
    assert (
        response.status_code == 405
        and "GET" in response.headers["Allow"]
        and response.json["error"]["code"] == "method_not_allowed"
    )


# --- schemathesis, in-process, over the OpenAPI document ---------------------------------


@pytest.mark.slow
def test_the_api_never_errors_and_keeps_to_its_document(app, admin):
    """Every operation of /api/openapi.json, with generated inputs, as an admin: no 5xx, and every
    response matches the document. (Driven directly: schemathesis' pytest fixture loader does not
    run on pytest 9.)"""
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30
    for operation in operations:
        if operation.path != "/api/v1/auth/logout":  # logging out would end the session under test
            fuzz(operation, admin)
    print(f"\nfuzzed {len(operations)} operations with {len(FUZZ_CASES)} cases: no server error")


# No server errors, and every response as documented (status, content type, headers, body). Not
# "schema-valid input must be accepted": the services refuse what a JSON Schema cannot express
# (a category that does not exist, a booking beyond the stock), with a documented 4xx.
DOCUMENT_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


# In `make test` the fuzz is small and derandomised: CI never fails by chance. `make fuzz` runs it
# long and random (INVENTORY_AI_FUZZ_EXAMPLES, INVENTORY_AI_FUZZ_RANDOM); what it finds becomes a
# fixed test (tests/api/test_malformed_bodies.py, tests/api/test_booking_quantities.py,
# tests/api/test_level_cap.py).
FUZZ_EXAMPLES = int(os.environ.get("INVENTORY_AI_FUZZ_EXAMPLES", "6"))
FUZZ_RANDOM = os.environ.get("INVENTORY_AI_FUZZ_RANDOM") == "1"
FUZZ_CASES: list[int] = []


def fuzz(operation, headers) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=FUZZ_EXAMPLES,
        derandomize=not FUZZ_RANDOM,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case):
        response = case.call(headers=headers)
        FUZZ_CASES.append(response.status_code)
        assert response.status_code < 500, (
            f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
        )
        case.validate_response(response, checks=DOCUMENT_CHECKS)

    check()


@pytest.mark.slow
def test_sequences_of_calls_never_error_and_keep_to_the_document(app, app_with):
    """Stateful: schemathesis follows the document's links (inventory_ai/api/links.py) through
    sequences such as create a material -> read it -> change it -> book a movement of it -> list
    its levels, as an admin: no 5xx, and every response as documented. Small and derandomised in
    `make test`, long and random under the same variables as the stateless run (`make fuzz`).

    Every scenario runs on its own freshly seeded app: Hypothesis replays what it generated and
    needs the same calls to get the same answers (a code taken by an earlier scenario would not)."""
    current = ScenarioApp(app)
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", current).include(
        path_regex=r"^/api/v1/(admin/|auth/tokens)"  # never /auth/logout or /auth/password
    )
    steps: list[tuple[str, int, bool]] = []

    class Workflow(schema.as_state_machine()):
        def setup(self):
            current.fresh(app_with())

        def step(self, input):
            output = super().step(input)
            steps.append(
                (input.case.operation.label, output.response.status_code, input.transition is not None)
            )
            return output

        def before_call(self, case):
            assert case.operation.path.startswith(("/api/v1/admin/", "/api/v1/auth/tokens"))
            current.spare_the_credential(case.path_parameters or {})

        def get_call_kwargs(self, case):
            return {"headers": current.headers}

        def after_call(self, response, case):
            super().after_call(response, case)
            assert response.status_code < 500, (
                f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
            )

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=DOCUMENT_CHECKS, recorder=self.recorder)

    Workflow.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=not FUZZ_RANDOM,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
    )
    followed = sum(linked for _, _, linked in steps)
    operations = {label for label, _, _ in steps}
    assert followed and len(operations) >= 10, f"the links were hardly followed: {sorted(operations)}"
    print(
        f"\nstateful: {current.scenarios} scenarios, {len(steps)} steps ({followed} along a link) over "
        f"{len(operations)} operations, statuses {dict(sorted(Counter(s for _, s, _ in steps).items()))}: "
        "no server error"
    )


class ScenarioApp:
    """The WSGI app under the stateful test, a fresh one per scenario, with an admin's token."""

    def __init__(self, app):
        self.app, self.headers, self.scenarios = app, {}, 0

    def __call__(self, environ, start_response):
        return self.app(environ, start_response)

    def fresh(self, app) -> None:
        if self.scenarios:  # the scenario before is over: its connections go back (PostgreSQL allows 100)
            let_go(self.app)
        self.app, self.scenarios = app, self.scenarios + 1
        with app.app_context():
            users = {u.username: u for u in db.session.scalars(select(User))}
            _, plain = issue_token(users["admin"], "stateful fuzz", scopes=("read", "chat", "admin"))
            spare, _ = issue_token(users["admin"], "spare", scopes=("read", "chat", "admin"))
            db.session.commit()
            self.admin_id, self.staff_id, self.spare_token = users["admin"].id, users["staff"].id, spare.id
            self.token_id = db.session.scalar(select(ApiToken.id).where(ApiToken.name == "stateful fuzz"))
            db.session.remove()
        self.headers = {"Authorization": f"Bearer {plain}"}

    def spare_the_credential(self, path_parameters: dict) -> None:
        """The run must not end its own login: an admin's password reset of themselves revokes their
        tokens, and so does revoking this very token. A generated id that lands on either goes to a
        spare (the staff user, a second token) instead: the same code path, a harmless end."""
        if path_parameters.get("user_id") == self.admin_id and "token_id" not in path_parameters:
            path_parameters["user_id"] = self.staff_id
        if path_parameters.get("token_id") == self.token_id:
            path_parameters["token_id"] = self.spare_token


# Scenarios (each a sequence of up to STATEFUL_STEPS calls) of the stateful run.
STATEFUL_SCENARIOS = 4 * FUZZ_EXAMPLES
STATEFUL_STEPS = int(os.environ.get("INVENTORY_AI_FUZZ_STEPS", "10"))


def test_schema_document_is_served(client):
    doc = client.get("/api/openapi.json").json
    assert doc["openapi"].startswith("3.") and "/api/v1/admin/materials/import" in doc["paths"]


def test_openapi_links_lead_to_operations_of_the_document(client):
    """Every link (inventory_ai/api/links.py) names an operation that exists, fills in parameters
    that operation has, and takes its values from the response body; the chains are there."""
    doc = client.get("/api/openapi.json").json
    links = {}
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for status, response in (
                operation.get("responses", {}) if method != "parameters" else {}
            ).items():
                for name, link in response.get("links", {}).items():
                    links[(method.upper(), path, status, name)] = link
    for source, link in links.items():
        pointer = link["operationRef"].removeprefix("#/paths/")
        target_path, method = pointer.rsplit("/", 1)
        target_path = target_path.replace("~1", "/").replace("~0", "~")
        target = doc["paths"][target_path][method]
        names = {
            p["name"]
            for p in [*target.get("parameters", []), *doc["paths"][target_path].get("parameters", [])]
        }
        assert set(link.get("parameters", {})) <= names, source
        values = [*link.get("parameters", {}).values(), *link.get("requestBody", {}).values()]
        assert values and all(v.startswith("$response.body#/") for v in values), source
        if "requestBody" in link:
            body = target["requestBody"]["content"]["application/json"]["schema"]
            properties = doc["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]
            assert set(link["requestBody"]) <= set(properties), source
    names = {name for (_, _, _, name) in links}
    assert {"GetMaterial", "UpdateMaterial", "BookMovementOfMaterial", "ListLevelsOfMaterial"} <= names
    assert {"GetUser", "UpdateUser", "GetIntent", "DeleteIntent", "RevokeToken"} <= names
    assert len(links) >= 40
