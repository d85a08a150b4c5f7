"""The requests session the dashscope SDK sends model calls through (its `session=`): keep-alive
connections to DashScope, and requests' per-call work done once where its answer cannot change.

requests prepares every call from scratch: the session's and the call's headers merged into a new
case-insensitive dict and each header checked against a pattern, the URL parsed and quoted again,
two cookie jars merged into a third, the URL's credentials looked for. For the calls the SDK
makes (a POST of JSON bytes to one URL with the same headers each time) that was about 450 Python
calls a message. Here the same preparation is done once per URL and set of headers and its result
copied; anything outside that shape, or anything that could make the result differ (cookies held
or given, credentials in the URL or `~/.netrc`, hooks, params, files), goes through requests' own
`prepare_request`. `~/.netrc` is still looked for on every call, as requests does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.cookies import RequestsCookieJar
from requests.models import PreparedRequest
from requests.sessions import merge_setting
from requests.structures import CaseInsensitiveDict
from requests.utils import get_auth_from_url, get_netrc_auth

POOL_CONNECTIONS = 64  # kept open for reuse, per process; at gunicorn's 64 threads no call waits
PREPARED_KEPT = 32  # URLs and sets of headers remembered; a process sees one or two of each

_NO_HOOKS = {"response": []}


class ModelHttpSession(requests.Session):
    """requests looks at the environment (proxies, no_proxy, the CA bundle) on every call: a scan
    of every variable, most of a millisecond a model call. Here it is looked at once per host and
    the answer kept: the same settings, read when the first call to that host is made. A call is
    prepared as the module says."""

    def __init__(self) -> None:
        super().__init__()
        self._environment: dict[str, dict] = {}
        self._environment_lock = threading.Lock()
        self._urls: dict[str, str | None] = {}  # as given -> as prepared (None: it carries credentials)
        self._headers: dict[tuple, OrderedDict] = {}  # (session's, call's) -> the checked, merged store

    def merge_environment_settings(self, url, proxies, stream, verify, cert):
        if proxies or verify not in (True, None) or cert is not None:  # a call's own: as requests does
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        host = urlsplit(url)[:2]
        with self._environment_lock:
            found = self._environment.get(host)
            if found is None:
                found = self._environment[host] = super().merge_environment_settings(
                    url, {}, None, verify, None
                )
        return {
            **found,
            "proxies": dict(found["proxies"]),
            "stream": stream if stream is not None else self.stream,
        }

    def prepare_request(self, request: requests.Request) -> PreparedRequest:
        body = request.data
        if not (
            type(body) is bytes
            and body
            and type(request.method) is str
            and type(request.url) is str
            and type(request.headers) is dict
            and type(self.headers) is CaseInsensitiveDict
            and type(self.cookies) is RequestsCookieJar
            and not self.cookies._cookies  # holds none: no Cookie header to build
            and not request.cookies
            and request.auth is None
            and self.auth is None
            and request.json is None
            and not request.files
            and not request.params
            and not self.params
            and request.hooks == _NO_HOOKS
            and self.hooks == _NO_HOOKS
        ):
            return super().prepare_request(request)
        url = self._urls.get(request.url, False)
        if url is False:
            url = self._remember(self._urls, request.url, _prepared_url(request.url))
        if url is None or (self.trust_env and get_netrc_auth(request.url)):
            return super().prepare_request(request)  # credentials to add: requests' own way
        try:
            key = (tuple(self.headers._store.values()), tuple(request.headers.items()))
            store = self._headers.get(key)
        except TypeError:  # a value that cannot be a key: requests' own way
            return super().prepare_request(request)
        if store is None:
            checked = PreparedRequest()
            checked.prepare_headers(
                merge_setting(request.headers, self.headers, dict_class=CaseInsensitiveDict)
            )
            store = self._remember(self._headers, key, checked.headers._store)
        prepared = PreparedRequest()
        prepared.method = request.method.upper()
        prepared.url = url
        prepared.headers = CaseInsensitiveDict()
        prepared.headers._store = store.copy()
        prepared._cookies = RequestsCookieJar()  # its own: a redirect adds to it
        prepared.body = body
        prepared.headers["Content-Length"] = str(len(body))
        return prepared

    @staticmethod
    def _remember(kept: dict, key, value):
        if len(kept) >= PREPARED_KEPT:
            kept.clear()
        kept[key] = value
        return value


def _prepared_url(url: str) -> str | None:
    """The URL as requests sends it (no params), or None when it carries credentials."""
    prepared = PreparedRequest()
    prepared.prepare_url(url, OrderedDict())
    return None if any(get_auth_from_url(prepared.url)) else prepared.url


def model_http_session(pool_size: int = POOL_CONNECTIONS) -> requests.Session:
    """One per process: keep-alive connections to DashScope, reused by every call."""
    session = ModelHttpSession()
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool_size)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session
