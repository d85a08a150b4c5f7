"""Liveness and readiness for load balancers and operators."""

from flask import Blueprint, jsonify
from sqlalchemy import text

from inventory_ai.extensions import db
from inventory_ai.logging import get_logger
from inventory_ai.observability import PLAIN_HTTP

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
    return jsonify(status="ok", database="ok")


readyz.talisman_view_options = PLAIN_HTTP
