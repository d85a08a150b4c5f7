"""Redis gone, requests still served: the rate limits (logins, chat messages) and the model's
circuit breaker fall back to this process while Redis does not answer, and go back to Redis when
it does. One warning when it goes (`redis_down`), one line when it is back (`redis_back`), the gauge
`inventory_ai_redis_up` and `/readyz` (`"redis": "down"`, status `degraded`) say which it is.

While Redis is down each process counts on its own (as without INVENTORY_AI_REDIS_URL); counts made
meanwhile stay in the process, and Redis' own counts take over again once it answers. Redis is
tried again at most once a second while down, so a dead Redis costs a request no more than one
refused connection a second (or its timeout, `SOCKET_SECONDS`, for one that hangs)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import redis
from limits.storage import MemoryStorage, RedisStorage, Storage

from inventory_ai.logging import get_logger
from inventory_ai.observability import REDIS_UP

log = get_logger(__name__)
T = TypeVar("T")

RETRY_SECONDS = 1.0
SOCKET_SECONDS = 0.5
# What a Redis that is stopped, unreachable or hung raises (redis-py wraps socket errors in these).
DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class SweptMemoryStorage(MemoryStorage):
    """limits' in-process storage (`memory://`), its expired counters swept at most once a second.

    limits starts a thread (a 10 ms threading.Timer) to sweep them on every hit that finds the
    last one ended: under steady load a new thread per request, about 4 % of a chat message's CPU
    (docs/benchmarks.md). A counter past its expiry is dropped when it is read anyway, so the sweep
    only bounds memory, and once a second does that. The hook is limits' own private method,
    overridden by its mangled name (limits is pinned: constraints.txt; tests/ops/test_rate_limit_counters.py
    fails if a new version stops calling it)."""

    STORAGE_SCHEME = ["swept-memory"]
    SWEEP_SECONDS = 1.0

    def _MemoryStorage__schedule_expiry(self) -> None:  # noqa: N802 (limits' name for it)
        if not self.timer.is_alive():
            self.timer = threading.Timer(self.SWEEP_SECONDS, self._MemoryStorage__expire_events)
            self.timer.daemon = True  # a pending sweep never holds up the process's exit
            self.timer.start()

    def count_and_expiry(self, key: str, expiry: int, amount: int = 1) -> tuple[int, float]:
        """`incr`, and when the counter's window ends (epoch seconds): what a fixed-window limit's
        check and its headers need, in one operation (RedisOrMemory: one Redis round trip)."""
        count = self.incr(key, expiry, amount)
        return count, self.expirations.get(key, time.time())


class RedisHealth:
    """This process's view of Redis: up until a call fails, then down until one succeeds (tried
    again once RETRY_SECONDS passed)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._retry_at = 0.0

    @property
    def up(self) -> bool:
        return self._down_since is None

    def worth_trying(self) -> bool:
        return self._down_since is None or time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException, what: str) -> None:
        with self._lock:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            if self._down_since is not None:
                return
            self._down_since = time.monotonic()
        REDIS_UP.set(0)
        log.warning("redis_down", error_type=type(exc).__name__, during=what, fallback="process")

    def answered(self) -> None:
        if self._down_since is None:
            return
        with self._lock:
            down_since, self._down_since = self._down_since, None
        if down_since is not None:
            REDIS_UP.set(1)
            log.info("redis_back", down_seconds=round(time.monotonic() - down_since, 1))

    def reset(self) -> None:
        with self._lock:
            self._down_since, self._retry_at = None, 0.0


HEALTH = RedisHealth()


def with_fallback(shared: Callable[[], T], local: Callable[[], T], what: str) -> T:
    """`shared()` (a Redis call) while Redis answers; `local()` (the process's own) while it does not."""
    if HEALTH.worth_trying():
        try:
            result = shared()
        except DOWN as exc:
            HEALTH.failed(exc, what)
        else:
            HEALTH.answered()
            return result
    return local()


def redis_options() -> dict:
    """Connection options for every Redis client of the app: a hung Redis is given up on quickly."""
    return {"socket_timeout": SOCKET_SECONDS, "socket_connect_timeout": SOCKET_SECONDS}


# limits' incr_expire.lua (a counter's window starts at its first increment), answering its time to
# live as well: a limit's check and its X-RateLimit-* headers in one round trip.
COUNT_AND_TTL = """
local amount = tonumber(ARGV[2])
local current = redis.call("incrby", KEYS[1], amount)
if tonumber(current) == amount then
    redis.call("expire", KEYS[1], ARGV[1])
end
return {current, redis.call("pttl", KEYS[1])}
"""


class RedisOrMemory(Storage):
    """limits' storage: Redis (`fallback+redis://…` is the Redis URL) while it answers, the
    process's swept memory storage while it does not."""

    STORAGE_SCHEME = ["fallback+redis", "fallback+rediss"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.shared = RedisStorage(uri.removeprefix("fallback+"), **{**redis_options(), **options})
        self.local = SweptMemoryStorage()
        self._count_script = self.shared.get_connection().register_script(COUNT_AND_TTL)
        REDIS_UP.set(1 if HEALTH.up else 0)

    @property
    def base_exceptions(self):
        return ()  # nothing escapes: a Redis that is down is this storage's own business

    def _either(self, method: str, *args, **kwargs):
        return with_fallback(
            lambda: getattr(self.shared, method)(*args, **kwargs),
            lambda: getattr(self.local, method)(*args, **kwargs),
            f"limits.{method}",
        )

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return self._either("incr", key, expiry, amount=amount)

    def count_and_expiry(self, key: str, expiry: int, amount: int = 1) -> tuple[int, float]:
        """SweptMemoryStorage.count_and_expiry: in Redis, limits' own increment script that also
        answers the counter's time to live."""
        return with_fallback(
            lambda: self._shared_count(key, expiry, amount),
            lambda: self.local.count_and_expiry(key, expiry, amount),
            "limits.incr",
        )

    def _shared_count(self, key: str, expiry: int, amount: int) -> tuple[int, float]:
        count, ttl_ms = self._count_script([self.shared.prefixed_key(key)], [expiry, amount])
        return int(count), time.time() + max(int(ttl_ms), 0) / 1000

    def get(self, key: str) -> int:
        return self._either("get", key)

    def get_expiry(self, key: str) -> float:
        return self._either("get_expiry", key)

    def check(self) -> bool:
        try:
            ok = self.shared.check()
        except DOWN as exc:
            ok = False
            HEALTH.failed(exc, "limits.check")
        if ok:
            HEALTH.answered()
        else:
            HEALTH.failed(ConnectionError("no answer to PING"), "limits.check")
        return True  # the process's storage always answers

    def reset(self) -> int | None:
        self.local.reset()
        return self._either("reset")

    def clear(self, key: str) -> None:
        self.local.clear(key)
        self._either("clear", key)
