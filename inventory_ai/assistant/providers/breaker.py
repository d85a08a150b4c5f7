"""The circuit breaker in front of a model (pybreaker): after FAIL_MAX consecutive failed attempts it
opens for RESET_TIMEOUT seconds, then lets one trial call through. One per model, so a throttled
qwen-plus does not keep its fallback from answering. Its state lives in Redis when configured, so
every process sees the same breaker, and in the process while Redis does not answer."""

from __future__ import annotations

import math
import threading
import time
from datetime import UTC, datetime

import pybreaker

from inventory_ai.assistant.providers.base import ModelUnavailable
from inventory_ai.observability import BREAKER_OPEN
from inventory_ai.redis_fallback import DOWN, HEALTH, redis_options, with_fallback

FAIL_MAX = 3
RESET_TIMEOUT = 30


class TrialGate:
    """Lets exactly one trial call through while the breaker is half-open. The gate expires after
    RESET_TIMEOUT, in Redis and in process alike, so a trial that never reports back (its stream
    abandoned, its thread gone) cannot keep it shut."""

    def __init__(self, redis_client=None, key: str = "inventory_ai:dashscope:trial"):
        self._redis = redis_client
        self._key = key
        self._lock = threading.Lock()
        self._held_until = 0.0

    def acquire(self) -> bool:
        if self._redis is not None:
            return bool(self._redis.set(self._key, "1", nx=True, ex=RESET_TIMEOUT))
        with self._lock:
            now = time.monotonic()
            if now < self._held_until:
                return False
            self._held_until = now + RESET_TIMEOUT
            return True

    def release(self) -> None:
        if self._redis is not None:
            self._redis.delete(self._key)
        else:
            with self._lock:
                self._held_until = 0.0


class ModelBreaker:
    """pybreaker's counting and storage, without holding its lock for a whole streamed call."""

    def __init__(self, breaker: pybreaker.CircuitBreaker, gate: TrialGate):
        self.breaker = breaker
        self.gate = gate

    @property
    def state(self) -> str:
        return self.breaker.current_state

    def retry_after(self) -> int:
        opened_at = self.breaker._state_storage.opened_at  # pybreaker exposes no public getter
        if opened_at is None:
            return RESET_TIMEOUT
        elapsed = (datetime.now(UTC) - opened_at).total_seconds()
        return max(0, math.ceil(self.breaker.reset_timeout - elapsed))

    def before_call(self) -> bool:
        """Raise ModelUnavailable while open; returns True when this call is the half-open trial."""
        state = self.state
        BREAKER_OPEN.set(1 if state == pybreaker.STATE_OPEN else 0)
        if state == pybreaker.STATE_CLOSED:
            return False
        remaining = self.retry_after() if state == pybreaker.STATE_OPEN else 0
        if remaining > 0 or not self.gate.acquire():
            raise ModelUnavailable("the assistant is temporarily unavailable", retry_after=max(remaining, 1))
        return True

    def record(self, error: Exception | None, trial: bool) -> None:
        def outcome():
            if error is not None:
                raise error

        try:
            self.breaker.call(outcome)
        except Exception:  # the outcome is what we record; it was raised to the caller already
            pass
        finally:
            if trial:
                self.gate.release()
            BREAKER_OPEN.set(1 if self.state == pybreaker.STATE_OPEN else 0)


def shared_breaker(redis_url: str | None, model: str = "") -> ModelBreaker | FallbackBreaker:
    """One breaker per model: a throttled qwen-plus must not keep its fallback qwen-turbo from answering."""
    namespace = "inventory_ai:dashscope" + (f":{model}" if model else "")
    if redis_url:
        return FallbackBreaker(redis_url, namespace)
    return _process_breaker()


def _process_breaker() -> ModelBreaker:
    breaker = pybreaker.CircuitBreaker(
        fail_max=FAIL_MAX, reset_timeout=RESET_TIMEOUT, throw_new_error_on_trip=False
    )
    return ModelBreaker(breaker, TrialGate())


class FallbackBreaker:
    """The breaker in Redis, shared by every process, while Redis answers; this process's own while
    it does not (redis_fallback.py). The Redis one is made at its first use, so a process can start
    while Redis is down."""

    def __init__(self, redis_url: str, namespace: str):
        import redis

        self._client = redis.Redis.from_url(redis_url, **redis_options())
        self._namespace = namespace
        self._shared: ModelBreaker | None = None
        self.local = _process_breaker()

    def _shared_breaker(self) -> ModelBreaker:
        self._client.ping()  # raises while Redis is down: pybreaker's storage would swallow it
        if self._shared is None:
            storage = pybreaker.CircuitRedisStorage(
                pybreaker.STATE_CLOSED, self._client, namespace=self._namespace
            )
            breaker = pybreaker.CircuitBreaker(
                fail_max=FAIL_MAX,
                reset_timeout=RESET_TIMEOUT,
                state_storage=storage,
                throw_new_error_on_trip=False,
            )
            self._shared = ModelBreaker(breaker, TrialGate(self._client, key=f"{self._namespace}:trial"))
        return self._shared

    def _active(self) -> ModelBreaker:
        return with_fallback(self._shared_breaker, lambda: self.local, "breaker")

    @property
    def breaker(self) -> pybreaker.CircuitBreaker:
        return self._active().breaker

    @property
    def state(self) -> str:
        return self._active().state

    def retry_after(self) -> int:
        return self._active().retry_after()

    def before_call(self) -> bool:
        active = self._active()
        try:
            return active.before_call()
        except DOWN as exc:  # Redis went between the look and the trial's gate
            HEALTH.failed(exc, "breaker")
            return self.local.before_call()

    def record(self, error: Exception | None, trial: bool) -> None:
        active = self._active()
        try:
            active.record(error, trial)
        except DOWN as exc:
            HEALTH.failed(exc, "breaker")
            self.local.record(error, trial)
