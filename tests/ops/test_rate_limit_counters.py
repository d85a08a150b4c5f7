"""The in-process rate-limit counters (no Redis configured): counted and expired as limits counts
them, without a new thread per request (redis_fallback.SweptMemoryStorage)."""

from __future__ import annotations

import time

from flask import Flask
from flask_limiter import Limiter

from inventory_ai.extensions import SweptMemoryStorage, drop_idle_limit_check, limiter


def test_steady_requests_share_one_sweeper_thread(app):
    with app.app_context():
        storage = limiter.limiter.storage
    assert isinstance(storage, SweptMemoryStorage)
    sweepers = []  # the timers themselves, kept: a freed one's id could be reused
    for _ in range(20):  # 20 ms apart: limits' own 10 ms sweeper would have ended before each
        storage.incr("test:steady", 60)
        sweepers.append(storage.timer)
        time.sleep(0.02)
    assert all(sweeper is sweepers[0] for sweeper in sweepers)
    assert storage.get("test:steady") == 20


def test_a_counter_past_its_window_reads_as_zero_before_any_sweep(app):
    with app.app_context():
        storage = limiter.limiter.storage
    storage.incr("test:window", 0.05)
    storage.incr("test:window", 0.05)
    assert storage.get("test:window") == 2
    time.sleep(0.1)  # the sweep is a second away: the read itself drops the expired counter
    assert storage.get("test:window") == 0


def _limited_app(extension: Limiter) -> Flask:
    app = Flask(__name__)
    extension.init_app(app)

    @app.get("/free")
    def free():
        return "ok"

    drop_idle_limit_check(app, extension)
    return app


def test_the_limiters_check_before_every_view_goes_only_while_no_limit_needs_it(app):
    assert limiter._check_request_limit not in app.before_request_funcs[None]  # the app sets none

    idle = Limiter(key_func=lambda: "everyone", storage_uri="memory://")
    assert idle._check_request_limit not in _limited_app(idle).before_request_funcs[None]

    defaults = Limiter(key_func=lambda: "everyone", default_limits=["2 per day"], storage_uri="memory://")
    client = _limited_app(defaults).test_client()
    assert [client.get("/free").status_code for _ in range(3)] == [200, 200, 429]
