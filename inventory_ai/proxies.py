"""X-Forwarded-* believed only from the proxies we deploy behind (INVENTORY_AI_TRUSTED_PROXIES).

werkzeug's ProxyFix trusts the headers of whoever connects; a client reaching the app directly
could then choose its own address for the login throttle. Here a request from a trusted peer goes
through ProxyFix (one hop), and any other has those headers removed.
"""

from __future__ import annotations

import ipaddress

from werkzeug.middleware.proxy_fix import ProxyFix

_FORWARDED = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_X_FORWARDED_PORT",
              "HTTP_X_FORWARDED_PREFIX", "HTTP_FORWARDED")  # fmt: skip


class TrustedProxyFix:
    def __init__(self, app, trusted: tuple[str, ...]):
        self.app = app
        self.via_proxy = ProxyFix(app, x_for=1, x_proto=1)
        self.networks = [ipaddress.ip_network(t, strict=False) for t in trusted]

    def _trusted(self, peer: str | None) -> bool:
        try:
            address = ipaddress.ip_address(peer or "")
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def __call__(self, environ, start_response):
        if self._trusted(environ.get("REMOTE_ADDR")):
            return self.via_proxy(environ, start_response)
        for header in _FORWARDED:
            environ.pop(header, None)
        return self.app(environ, start_response)
