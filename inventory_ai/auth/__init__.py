"""Who is calling: a session cookie (web form, scripts after /api/v1/auth/login) or a bearer token.

`pipeline` checks every request (logins, tokens, CSRF, a token's scopes); `scopes` is what a bearer
token may do (TOKEN_RULES, the one table); `tokens` issues and checks API tokens; `logins` signs a
person in and out.
"""

from inventory_ai.auth.logins import (
    authenticated_user,
    check_credentials,
    end_logins,
    hashed_password,
    log_in,
    log_out,
    password_matches,
)
from inventory_ai.auth.pipeline import init_app
from inventory_ai.auth.scopes import TOKEN_RULES, issue_scopes, request_token_scopes, token_rule
from inventory_ai.auth.tokens import (
    TOKEN_CHECK_SECONDS,
    TokenRefused,
    agent_user,
    forget_tokens,
    issue_token,
    user_for_token,
)

__all__ = [
    "TOKEN_CHECK_SECONDS",
    "TOKEN_RULES",
    "TokenRefused",
    "agent_user",
    "authenticated_user",
    "check_credentials",
    "end_logins",
    "forget_tokens",
    "hashed_password",
    "init_app",
    "issue_scopes",
    "issue_token",
    "log_in",
    "log_out",
    "password_matches",
    "request_token_scopes",
    "token_rule",
    "user_for_token",
]
