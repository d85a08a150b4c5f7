"""Extension singletons, bound to the app in create_app."""

import functools
import hashlib
import hmac
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import after_this_request, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from limits import RateLimitItem, parse, parse_many
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase
from werkzeug.exceptions import TooManyRequests

# Both storage schemes this product uses (`swept-memory://`, `fallback+redis://`) register with limits
# when their classes are defined (its registry is the class's metaclass).
from inventory_ai.redis_fallback import SweptMemoryStorage  # noqa: F401 (registers; tests import it here)

# Named constraints so Alembic batch migrations on SQLite can find and alter them.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


# A session lives for one request (or one CLI command) and commits several times along the way (the
# loop stores each round as it completes). Expiring every object on each commit made the loop reload
# them again and again: 52 SQL statements per message instead of 25 (bench/loop_overhead.py).
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})
migrate = Migrate()
login_manager = LoginManager()
csrf = CSRFProtect()


def _login_field(name: str) -> str:
    body = request.get_json(silent=True) if request.is_json else None
    value = request.form.get(name) or (body.get(name) if isinstance(body, dict) else None) or ""
    return str(value)[:256]


def _login_key() -> str:
    """Failed logins per address and username, so one user's typos lock no one else out."""
    return f"{get_remote_address()}:{_login_field('username')[:64]}"


def _password_key() -> str:
    """Failed logins per password, whatever the username: one password tried across many names
    (spraying). A keyed hash of the password, never the password, is the counter's name."""
    secret = current_app.config["SECRET_KEY"].encode()
    return "pw:" + hmac.new(secret, _login_field("password").encode(), hashlib.sha256).hexdigest()[:32]


def _own_login_key() -> str:
    """The logged-in user's failed logins, as _login_key counts them for their name."""
    from flask_login import current_user

    return f"{get_remote_address()}:{current_user.username[:64]}"


def _own_user_key() -> str:
    from flask_login import current_user

    return f"user:{current_user.id}"


# Storage: Redis when INVENTORY_AI_REDIS_URL is set (shared by every process), else in-process.
limiter = Limiter(key_func=get_remote_address, headers_enabled=True)
LOGIN_LIMIT = "5 per minute"
# Attempts that find their limit taken by attempts still being evaluated wait this long, at most,
# for those to end (a success gives its place back) before they are refused.
ATTEMPT_WAIT_SECONDS = 10.0
_IN_FLIGHT_SECONDS = 120  # an attempt's place is given back within this, even if its process died


@dataclass(frozen=True)
class _Counter:
    limit: str
    scope: str
    key: Callable[[], str]


LOGIN_COUNTERS = (
    _Counter(LOGIN_LIMIT, "login", _login_key),
    _Counter("30 per minute", "login-address", get_remote_address),
    _Counter("10 per 10 minutes", "login-password", _password_key),
)
PASSWORD_CHANGE_COUNTERS = (
    _Counter(LOGIN_LIMIT, "login", _own_login_key),
    _Counter("30 per minute", "login-address", get_remote_address),
    _Counter("10 per hour", "password-change", _own_user_key),
)


def failures_limited(*counters: _Counter):
    """Limit the attempts that fail (401), counting each one before it is evaluated.

    Flask-Limiter's `deduct_when` tests the count before the view and counts after it: 48 guesses
    sent at once were all tested against a count of 0, and all evaluated. Here an attempt takes a
    place in every counter first (an atomic increment in the limiter's storage, Redis or
    in-process), is evaluated only if it got one in each, and gives its places back unless it
    failed: only failures stay counted, and no more attempts are ever being evaluated than the
    limits leave room for. An attempt that finds no room while others are still being evaluated
    waits for them (up to ATTEMPT_WAIT_SECONDS): a shift logging in at once from one address is
    let in as the logins succeed, while guesses beyond the limit are refused (429)."""

    def decorate(view):
        @functools.wraps(view)
        def limited(*args, **kwargs):
            if not (limiter.enabled and limiter.initialized):
                return view(*args, **kwargs)
            places = _take_places(counters)
            failed = False
            try:
                result = view(*args, **kwargs)
                failed = _status(result) == 401
                return result
            finally:
                _leave(places, keep_count=failed)

        return limited

    return decorate


@dataclass(frozen=True)
class _Place:
    item: RateLimitItem
    count: str  # the counter's storage key
    in_flight: str  # how many attempts hold a place in it and are still being evaluated


def _take_places(counters) -> list[_Place]:
    storage = limiter.limiter.storage
    waited_until = time.monotonic() + ATTEMPT_WAIT_SECONDS
    wanted = []
    for counter in counters:
        item, key = parse(counter.limit), counter.key()
        count = item.key_for(key, counter.scope)
        wanted.append(_Place(item, count, f"{count}/in-flight"))
    while True:
        taken, full = [], None
        for place in wanted:
            if storage.incr(place.count, place.item.get_expiry()) <= place.item.amount:
                storage.incr(place.in_flight, _IN_FLIGHT_SECONDS)
                taken.append(place)
            else:
                _give_back(storage, place.count)
                full = place
                break
        if full is None:
            _rate_limit_headers(wanted[0])
            return taken
        _leave(taken, keep_count=False)
        if storage.get(full.in_flight) <= 0:  # the limit is full of failures: wait for the window
            retry = max(1, math.ceil(storage.get_expiry(full.count) - time.time()))
            raise TooManyRequests("too many failed attempts; try again later", retry_after=retry)
        if time.monotonic() >= waited_until:
            raise TooManyRequests("too many attempts at once; try again in a few seconds", retry_after=5)
        db.session.commit()  # wait holding no transaction (SQLite: the write lock, auth.pipeline.protect_writes)
        time.sleep(0.02)  # others are being evaluated: a success among them gives its place back


def _leave(places: list[_Place], keep_count: bool) -> None:
    storage = limiter.limiter.storage
    for place in places:
        _give_back(storage, place.in_flight)
        if not keep_count:
            _give_back(storage, place.count)


def _give_back(storage, key: str) -> None:
    if storage.get(key) > 0:  # not once its window ended: the next one starts at 0
        storage.incr(key, 1, amount=-1)


def _status(result) -> int:
    if isinstance(result, tuple) and len(result) > 1 and isinstance(result[1], int):
        return result[1]
    return getattr(result, "status_code", 200)


def _rate_limit_headers(place: _Place) -> None:
    """X-RateLimit-* of the tightest counter (per address and name) on the attempt's response."""
    storage = limiter.limiter.storage
    remaining = max(0, place.item.amount - storage.get(place.count))
    reset = int(storage.get_expiry(place.count))

    @after_this_request
    def _headers(response):
        response.headers["X-RateLimit-Limit"] = str(place.item.amount)
        response.headers["X-RateLimit-Remaining"] = str(remaining)
        response.headers["X-RateLimit-Reset"] = str(reset)
        return response


def login_limit(view):
    """The web form and the API count failed logins together (shared counters): per address and
    name, per address overall, and per password across names."""
    return failures_limited(*LOGIN_COUNTERS)(view)


def password_change_limit(view):
    """A wrong current password (POST /api/v1/auth/password) is a failed login of that user: the
    same per address and name, and per address, counters as the login form's, and one per user
    whatever the address (a stolen session guessing the password, to change it and lock the owner
    out)."""
    return failures_limited(*PASSWORD_CHANGE_COUNTERS)(view)


def _caller_key() -> str:
    from flask_login import current_user

    user = current_user._get_current_object()  # once, not through the proxy at each attribute
    return f"user:{user.id}" if user.is_authenticated else f"ip:{get_remote_address()}"


@functools.lru_cache(maxsize=8)
def _limit_items(value: str) -> tuple[RateLimitItem, ...]:
    """The limits a setting names (`30 per minute; 500 per day`), shortest window first."""
    return tuple(sorted(parse_many(value))) if value else ()


def chat_limit(view):
    """Asking the assistant costs model time: INVENTORY_AI_CHAT_RATE_LIMIT per user (per address
    for the anonymous), for each view it decorates on its own.

    What Flask-Limiter's `limit` decorator did with the same limits' storage and keys (a fixed
    window from the first message, the same counters), with one counter operation per limit a
    message: the increment also answers when its window ends (`count_and_expiry`, redis_fallback.py),
    where the decorator incremented, then read the count and the expiry again for the headers (three
    Redis round trips with Redis), and resolved the view's limits through its manager each time.
    Past a limit: 429 with Retry-After (the window's end); every response carries X-RateLimit-*
    of the limit refused, else of the shortest window."""

    @functools.wraps(view)
    def limited(*args, **kwargs):
        if limiter.enabled and limiter.initialized:
            _count_message(_limit_items(current_app.config["CHAT_RATE_LIMIT"]))
        return view(*args, **kwargs)

    return limited


def _count_message(items: tuple[RateLimitItem, ...]) -> None:
    if not items:
        return
    storage = limiter.limiter.storage
    caller, scope = _caller_key(), request.endpoint
    shown = None
    for item in items:
        count, expires_at = storage.count_and_expiry(item.key_for(caller, scope), item.get_expiry())
        if shown is None or count > item.amount:
            shown = item, count, expires_at
        if count > item.amount:
            break
    item, count, expires_at = shown
    reset = int(expires_at + 1)

    @after_this_request
    def _headers(response):
        response.headers["X-RateLimit-Limit"] = str(item.amount)
        response.headers["X-RateLimit-Remaining"] = str(max(0, item.amount - count))
        response.headers["X-RateLimit-Reset"] = str(reset)
        return response

    if count > item.amount:
        raise TooManyRequests(str(item), retry_after=max(1, int(reset - time.time())))


def drop_idle_limit_check(app, extension: Limiter = limiter) -> None:
    """Flask-Limiter checks default, application-wide and blueprint limits before every view, and
    this app sets none of them: its limits are on views (chat_limit, failures_limited), checked as
    the view is called. That hook then counted nothing, at the cost of resolving the request's
    limits (about a third of the limiter's work on a chat message). Dropped while there are none;
    kept as soon as any is set. Called once every blueprint is registered."""
    manager = extension.limit_manager
    if (
        manager.default_limits
        or manager.application_limits
        or manager._blueprint_limits
        or extension._meta_limits
    ):
        return
    app.before_request_funcs[None].remove(extension._check_request_limit)
