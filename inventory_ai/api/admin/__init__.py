"""Admin JSON API under /api/v1/admin: 401 without credentials, 403 for anyone but an admin.

Conventions (docs/api.md): lists take `page` (from 1) and `per_page` (1-200, default 50) and answer
`{"items": [...], "page", "per_page", "total"}`; filters are query parameters named after the field.
"""

from __future__ import annotations

from flask import Flask


def init_admin(api, app: Flask) -> None:
    from inventory_ai.api.admin import audit, catalog, conversations, intents, metrics, tools, users

    for module in (users, tools, intents, catalog, conversations, audit, metrics):
        api.register_blueprint(module.blp)
