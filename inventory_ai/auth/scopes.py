"""What a bearer token may do: its scopes, and the one table (TOKEN_RULES) of what each view needs.

A session is a person, limited by their role only, its writes carrying the CSRF token. A bearer
token is a script or an agent, limited by its role AND its scopes. `decide` (approve or reject a
booking, sign off) is never given unless asked for: an agent that holds a token that can decide
could approve the bookings it proposes itself, and an approval the agent gives itself is none.
"""

from __future__ import annotations

from flask import request

from inventory_ai.errors import Forbidden, InvalidInput
from inventory_ai.models import TOKEN_SCOPES, User

READ, CHAT, DECIDE, ADMIN = TOKEN_SCOPES
DEFAULT_SCOPES = (READ, CHAT)
# What TOKEN_RULES may say besides a scope:
PUBLIC = "public"  # answers anyone: a token is neither needed nor looked at
ANY = "any"  # any usable token (what the view does is bounded by that token: issuing, revoking)
SESSION_ONLY = "session"  # a person signed in, never a token (changing the password)
AGENT = "agent"  # MCP: `chat`, and refused when the token could also `decide` or `admin`
# What an MCP client's token must not have: the client is an agent, and with either scope it could
# have a booking made that no person approved.
_NOT_FOR_AGENTS = {
    DECIDE: "approve the bookings it proposes itself",
    ADMIN: "book stock through the admin API without any approval, or give itself a login",
}
_WRITES_ADMIN = {"GET": READ, "POST": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}

# What a bearer token must carry, per view (Flask endpoint) and method (HEAD as GET; OPTIONS
# answers anyone). Deny by default: a view that is not here takes no token at all, and
# tests/api/test_token_scopes.py fails for every route missing here.
TOKEN_RULES: dict[str, dict[str, str]] = {
    # anyone, signed in or not
    "health.healthz": {"GET": PUBLIC},
    "health.readyz": {"GET": PUBLIC},
    "observability.metrics": {"GET": PUBLIC},
    "api-docs.openapi_json": {"GET": PUBLIC},
    "web.static": {"GET": PUBLIC},
    "web.favicon": {"GET": PUBLIC},
    "web.login": {"GET": PUBLIC, "POST": PUBLIC},
    "api_auth.Login": {"POST": PUBLIC},
    # who am I, my tokens (a token issues tokens of at most its own scopes: issue_scopes)
    "api_auth.Logout": {"POST": ANY},
    "web.logout": {"POST": ANY},
    "api_auth.Password": {"POST": SESSION_ONLY},
    "api_auth.Me": {"GET": READ},
    "api_auth.Tokens": {"GET": READ, "POST": ANY},
    "api_auth.TokenResource": {"DELETE": ANY},
    # chat
    "api_chat.Chat": {"POST": CHAT},
    "api_chat.MessageResource": {"GET": READ},
    "api_chat.Cancel": {"POST": CHAT},
    "api_chat.Pending": {"GET": READ},
    "api_chat.Conversations": {"GET": READ},
    "api_chat.ConversationResource": {"GET": READ, "PATCH": CHAT, "DELETE": CHAT},
    "web.index": {"GET": READ},
    "web.conversation": {"GET": READ},
    "web.answer": {"GET": READ},
    "web.all_rows": {"GET": READ},
    "web.overview": {"GET": READ},
    "web.conversation_list": {"GET": READ},
    "web.rename_conversation": {"POST": CHAT},
    "web.delete_conversation": {"POST": CHAT},
    "web.ask": {"POST": CHAT},
    "web.choose_language": {"POST": CHAT},
    "mcp.serve": {"GET": AGENT, "POST": AGENT, "DELETE": AGENT},
    # decisions: a person's (a session with its CSRF token), or a token issued with `decide`
    "api_chat.Decision": {"POST": DECIDE},
    "web.decide": {"POST": DECIDE},
    "api_approvals.Approvals": {"GET": READ},
    "web.approvals_page": {"GET": READ},
    "api_approvals.SignoffDecision": {"POST": DECIDE},
    "web.sign_off": {"POST": DECIDE},
    # the admin API (admins only, whatever the token): reads with `read`, writes with `admin`
    "admin_catalog.Materials": _WRITES_ADMIN,
    "admin_catalog.MaterialResource": _WRITES_ADMIN,
    "admin_catalog.MaterialImport": _WRITES_ADMIN,
    "admin_catalog.Levels": _WRITES_ADMIN,
    "admin_catalog.Movements": _WRITES_ADMIN,
    "admin_catalog.PurchaseRequests": _WRITES_ADMIN,
    "admin_catalog.Approve": _WRITES_ADMIN,
    "admin_catalog.Reject": _WRITES_ADMIN,
    "admin_users.Users": _WRITES_ADMIN,
    "admin_users.UserResource": _WRITES_ADMIN,
    "admin_users.UserPassword": _WRITES_ADMIN,
    "admin_tools.Tools": _WRITES_ADMIN,
    "admin_tools.ToolResource": _WRITES_ADMIN,
    "admin_intents.Intents": _WRITES_ADMIN,
    "admin_intents.IntentResource": _WRITES_ADMIN,
    "admin_conversations.Conversations": _WRITES_ADMIN,
    "admin_conversations.ConversationResource": _WRITES_ADMIN,
    "admin_audit.AuditEvents": _WRITES_ADMIN,
    "admin_metrics.Metrics": _WRITES_ADMIN,
}
SCOPES_KEY = "inventory_ai.token_scopes"  # in the request's environ: this request's token's scopes


def token_rule(endpoint: str | None, method: str) -> str | None:
    """What a bearer token needs for this view and method; None: not declared (refused)."""
    return TOKEN_RULES.get(endpoint or "", {}).get("GET" if method == "HEAD" else method)


def scope_refusal(rule: str | None, scopes: frozenset[str]) -> tuple[str, str, str | None] | None:
    """Why a token with `scopes` may not pass `rule`: (error code, message, the scope it lacks),
    or None when it may."""
    if rule in (PUBLIC, ANY):
        return None
    if rule is None or rule == SESSION_ONLY:
        return "insufficient_scope", "this takes no API token: sign in", None
    if rule == AGENT:
        for scope, could in _NOT_FOR_AGENTS.items():
            if scope in scopes:
                return (
                    f"{scope}_scope_refused",
                    f"this API token has the `{scope}` scope, and MCP clients are agents: with it an "
                    f"agent could {could}. Give the agent a token with `read` and `chat` only "
                    "(docs/mcp.md)",
                    None,
                )
        rule = CHAT
    if rule in scopes:
        return None
    if rule == DECIDE:
        why = (
            "approving or rejecting a booking is a person's decision: sign in (a session with its CSRF "
            "token), or use a token issued with the `decide` scope, never one an agent holds"
        )
    else:
        why = f"this API token lacks the `{rule}` scope (it has: {', '.join(sorted(scopes)) or 'none'})"
    return "insufficient_scope", why, rule


class ScopeRefused(Forbidden):
    code = "insufficient_scope"


def issue_scopes(user: User, asked: list[str] | None, minting: frozenset[str] | None) -> tuple[str, ...]:
    """The scopes a new token gets: `asked`, or DEFAULT_SCOPES (never `decide` nor `admin` unless
    asked for). `admin` only for admins (422). `minting`: the scopes of the token that asks, when a
    token asks (a token issues none it does not hold itself: 403), None for a session."""
    wanted = tuple(s for s in TOKEN_SCOPES if s in (DEFAULT_SCOPES if asked is None else asked))
    if ADMIN in wanted and not user.is_admin:
        raise InvalidInput(
            "scopes: `admin` is only for admins' tokens", {"fields": {"scopes": "admin: admins only"}}
        )
    lacking = [s for s in wanted if minting is not None and s not in minting]
    if lacking:
        raise ScopeRefused(
            f"a token issues tokens of at most its own scopes; this one lacks {', '.join(lacking)}",
            {"required_scope": lacking[0]},
        )
    return wanted


def request_token_scopes() -> frozenset[str] | None:
    """This request's bearer token's scopes; None for a session (or nobody)."""
    return request.environ.get(SCOPES_KEY)
