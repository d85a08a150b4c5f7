"""OpenAPI links: how a response leads to the next call (create a material, then read it, change
it, book a movement of it, list its levels). A client reads them as documentation; schemathesis
follows them to fuzz whole sequences (tests/api/test_api_keeps_to_its_document.py). All of them are declared here, and
an apispec plugin attaches them to the source operation's response as the document is built.

Targets are named by operationRef (the document has no operationIds); values come from the
response body by JSON pointer (`$response.body#/...`). A request-body link names only the fields it
fills in; a client (or the fuzzer) supplies the rest.
"""

from __future__ import annotations

from apispec import BasePlugin

ADMIN = "/api/v1/admin"
MATERIAL = f"{ADMIN}/materials/{{code}}"
MOVEMENTS = f"{ADMIN}/stock/movements"
LEVELS = f"{ADMIN}/stock/levels"
USER = f"{ADMIN}/users/{{user_id}}"
INTENT = f"{ADMIN}/intents/{{intent_id}}"
TOOL = f"{ADMIN}/tools/{{name}}"
PURCHASE_REQUEST = f"{ADMIN}/purchase-requests/{{request_id}}"


def operation_ref(path: str, method: str) -> str:
    """`#/paths/<path as a JSON pointer token>/<method>` (RFC 6901: "~" -> "~0", "/" -> "~1")."""
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def _link(path: str, method: str, description: str, parameters=None, request_body=None) -> dict:
    link = {"operationRef": operation_ref(path, method), "description": description}
    if parameters:
        link["parameters"] = parameters
    if request_body:
        link["requestBody"] = request_body
    return link


def _material_links(code: str) -> dict:
    """From any response that is one material: what can be done with that material next."""
    return {
        "GetMaterial": _link(MATERIAL, "get", "read the material", {"code": code}),
        "UpdateMaterial": _link(MATERIAL, "patch", "change the material", {"code": code}),
        "DeactivateMaterial": _link(MATERIAL, "delete", "deactivate the material", {"code": code}),
        "BookMovementOfMaterial": _link(
            MOVEMENTS, "post", "book a movement of the material", request_body={"material": code}
        ),
        "ListLevelsOfMaterial": _link(LEVELS, "get", "its stock levels", {"material": code}),
        "ListMovementsOfMaterial": _link(MOVEMENTS, "get", "its movements", {"material": code}),
    }


def _movement_links(material: str, warehouse: str) -> dict:
    """From a stock level or a booked movement: the next booking there, and the material's stock."""
    return {
        "BookAnotherMovement": _link(
            MOVEMENTS,
            "post",
            "book another movement of the same material in the same warehouse",
            request_body={"material": material, "warehouse": warehouse},
        ),
        "ListLevelsOfMaterial": _link(LEVELS, "get", "the material's stock levels", {"material": material}),
        "ListMovementsOfMaterial": _link(
            MOVEMENTS, "get", "the material's movements", {"material": material}
        ),
        "GetMaterial": _link(MATERIAL, "get", "read the material", {"code": material}),
    }


def _user_links(user_id: str, *, reset_password: bool) -> dict:
    links = {
        "GetUser": _link(USER, "get", "read the user", {"user_id": user_id}),
        "UpdateUser": _link(USER, "patch", "change the user's role or deactivate them", {"user_id": user_id}),
    }
    if reset_password:
        links["ResetPassword"] = _link(
            f"{USER}/password", "post", "set the user's password", {"user_id": user_id}
        )
    return links


def _intent_links(intent_id: str) -> dict:
    return {
        "GetIntent": _link(INTENT, "get", "read the intent", {"intent_id": intent_id}),
        "UpdateIntent": _link(INTENT, "patch", "change the intent", {"intent_id": intent_id}),
        "DeleteIntent": _link(INTENT, "delete", "delete the intent", {"intent_id": intent_id}),
    }


# (path, method, status) of a response -> its links. Not from a token list to DELETE /tokens/{id}:
# the first token listed may be the one the caller is using.
LINKS: dict[tuple[str, str, str], dict[str, dict]] = {
    # materials -> stock
    (f"{ADMIN}/materials", "post", "201"): _material_links("$response.body#/code"),
    (MATERIAL, "get", "200"): _material_links("$response.body#/code"),
    (MATERIAL, "patch", "200"): _material_links("$response.body#/code"),
    (f"{ADMIN}/materials", "get", "200"): {
        "GetFirstMaterial": _link(
            MATERIAL, "get", "read the first material", {"code": "$response.body#/items/0/code"}
        ),
        "CreateMaterialInSameCategory": _link(
            f"{ADMIN}/materials",
            "post",
            "a new material in the first material's category",
            request_body={"category": "$response.body#/items/0/category"},
        ),
    },
    (LEVELS, "get", "200"): _movement_links(
        "$response.body#/items/0/material", "$response.body#/items/0/warehouse"
    ),
    (MOVEMENTS, "get", "200"): _movement_links(
        "$response.body#/items/0/material", "$response.body#/items/0/warehouse"
    ),
    (MOVEMENTS, "post", "201"): _movement_links("$response.body#/material", "$response.body#/warehouse"),
    # users
    (f"{ADMIN}/users", "post", "201"): _user_links("$response.body#/id", reset_password=True),
    (USER, "patch", "200"): {
        "GetUser": _link(USER, "get", "read the user", {"user_id": "$response.body#/id"})
    },
    # tools -> intents
    (f"{ADMIN}/tools", "get", "200"): {
        "GetFirstTool": _link(TOOL, "get", "read the first tool", {"name": "$response.body#/0/name"}),
        "UpdateFirstTool": _link(TOOL, "patch", "switch the first tool", {"name": "$response.body#/0/name"}),
        "CreateIntentForFirstTool": _link(
            f"{ADMIN}/intents",
            "post",
            "an intent that leads to the first tool",
            request_body={"tool_name": "$response.body#/0/name"},
        ),
    },
    (TOOL, "patch", "200"): {
        "GetTool": _link(TOOL, "get", "read the tool", {"name": "$response.body#/name"})
    },
    (f"{ADMIN}/intents", "post", "201"): _intent_links("$response.body#/id"),
    (INTENT, "patch", "200"): _intent_links("$response.body#/id"),
    (f"{ADMIN}/intents", "get", "200"): {
        "GetFirstIntent": _link(
            INTENT, "get", "read the first intent", {"intent_id": "$response.body#/items/0/id"}
        )
    },
    # purchase requests, conversations
    (f"{ADMIN}/purchase-requests", "get", "200"): {
        "ApproveFirst": _link(
            f"{PURCHASE_REQUEST}/approve",
            "post",
            "approve the first",
            {"request_id": "$response.body#/items/0/id"},
        ),
        "RejectFirst": _link(
            f"{PURCHASE_REQUEST}/reject",
            "post",
            "reject the first",
            {"request_id": "$response.body#/items/0/id"},
        ),
    },
    (f"{ADMIN}/conversations", "get", "200"): {
        "GetFirstConversation": _link(
            f"{ADMIN}/conversations/{{conversation_id}}",
            "get",
            "read the first conversation",
            {"conversation_id": "$response.body#/items/0/id"},
        )
    },
    # API tokens: the one just issued can be revoked
    ("/api/v1/auth/tokens", "post", "201"): {
        "RevokeToken": _link(
            "/api/v1/auth/tokens/{token_id}",
            "delete",
            "revoke this token",
            {"token_id": "$response.body#/id"},
        )
    },
}


class LinksPlugin(BasePlugin):
    """Adds LINKS to each operation's responses as flask-smorest registers its path."""

    def operation_helper(self, path=None, operations=None, **kwargs) -> None:
        for method, operation in (operations or {}).items():
            for status, response in operation.get("responses", {}).items():
                links = LINKS.get((path, method, str(status)))
                if links and isinstance(response, dict):
                    response.setdefault("links", {}).update(links)
