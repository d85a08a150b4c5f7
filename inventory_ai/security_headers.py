"""Talisman (security headers, https only in production), its Content-Security-Policy written
without asking the request for a nonce once per directive.

Talisman's `_parse_policy` looks for `request.csp_nonce` at each of the policy's directives: with
no nonce configured (this app sets none) each look is a failed attribute lookup through werkzeug's
request proxy, an AttributeError raised and caught, 7 on every response. Here the request is asked
once; with no nonce the header is the same string Talisman writes, built the same way."""

from __future__ import annotations

from flask import request
from flask_talisman import Talisman


class SecurityHeaders(Talisman):
    def _parse_policy(self, policy):
        if isinstance(policy, str) or hasattr(request, "csp_nonce"):
            return super()._parse_policy(policy)
        return "; ".join(
            f"{section} {content if isinstance(content, str) else ' '.join(content)}"
            for section, content in policy.items()
        )
