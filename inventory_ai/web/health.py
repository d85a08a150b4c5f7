"""Liveness and readiness for load balancers and operators."""

from flask import Blueprint, current_app, jsonify
from sqlalchemy import text

from inventory_ai.extensions import db, limiter
from inventory_ai.logging import get_logger
from inventory_ai.observability import PLAIN_HTTP
from inventory_ai.redis_fallback import HEALTH

bp = Blueprint("health", __name__)
log = get_logger(__name__)


@bp.get("/healthz")
def healthz():
    return jsonify(status="ok")


healthz.talisman_view_options = PLAIN_HTTP


@bp.get("/readyz")
def readyz():
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:
        db.session.rollback()
        log.warning("readiness_failed", error_type=type(exc).__name__)
        return jsonify(status="unavailable", database="unreachable"), 503
    if not current_app.config["RATELIMIT_STORAGE_URI"].startswith("fallback+"):
        return jsonify(status="ok", database="ok")
    # Served without Redis too (limits and the breaker fall back to the process): ready, degraded.
    limiter.limiter.storage.check()
    redis = "ok" if HEALTH.up else "down"
    return jsonify(status="ok" if HEALTH.up else "degraded", database="ok", redis=redis)


readyz.talisman_view_options = PLAIN_HTTP
