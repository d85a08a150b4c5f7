"""inventory_ai: the app factory. A newcomer reads this top to bottom to see what the app is made of."""

from __future__ import annotations

from pathlib import Path

from flask import Flask, request
from werkzeug.routing import IntegerConverter

from inventory_ai.config import Config


def create_app(config: Config | None = None) -> Flask:
    # No app-level static folder: the staff pages serve theirs from the web blueprint.
    app = Flask(__name__, instance_path=str(Path.cwd() / "instance"), static_folder=None)
    config = config or Config.from_env(Path(app.instance_path))
    app.config.from_mapping(config.flask_settings())
    app.extensions["inventory_ai.config"] = config

    from inventory_ai.services import clock

    clock.set_timezone(config.timezone)
    register_logging(app, config)
    register_security(app, config)
    register_extensions(app)
    register_tracing(app)
    register_assistant(app)
    register_blueprints(app)
    register_mcp(app)
    register_errors(app)
    register_cli(app)
    register_limit_check(app)
    return app


def register_logging(app: Flask, config: Config) -> None:
    from inventory_ai.logging import bind_request_context, configure_logging

    configure_logging(production=config.production)
    bind_request_context(app)


def register_security(app: Flask, config: Config) -> None:
    from inventory_ai.body_deadline import BodyDeadline
    from inventory_ai.observability import init_metrics
    from inventory_ai.security_headers import SecurityHeaders

    # Outermost but for the proxy fix: a slow body is refused before anything else runs.
    app.wsgi_app = BodyDeadline(app.wsgi_app, config.body_read_seconds, app.config["MAX_CONTENT_LENGTH"] or 0)
    if config.production:
        # Behind the TLS-terminating proxy: its X-Forwarded-Proto/For (one hop) are believed only
        # when the request comes from it (INVENTORY_AI_TRUSTED_PROXIES); anyone else could write them.
        from inventory_ai.proxies import TrustedProxyFix

        app.wsgi_app = TrustedProxyFix(app.wsgi_app, config.trusted_proxies)
    SecurityHeaders(
        app,
        force_https=config.production,
        strict_transport_security=config.production,
        session_cookie_secure=config.production,
        frame_options="DENY",
        content_security_policy={
            "default-src": "'self'",
            "script-src": "'self'",
            "style-src": "'self'",
            "img-src": "'self' data:",
            "connect-src": "'self'",
            "frame-ancestors": "'none'",
            "form-action": "'self'",
        },
        referrer_policy="same-origin",
    )
    if config.cors_origins:
        # Other origins (a dashboard, a label printer's web UI) may call the JSON API with a bearer
        # token; no cookies cross origins, so CSRF stays the same-origin pages' concern.
        from flask_cors import CORS

        CORS(app, resources={r"/api/*": {"origins": list(config.cors_origins)}}, max_age=600)

        @app.after_request
        def _preflight_no_content(response):
            if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
                response.status_code = 204
                response.set_data(b"")
            return response

    init_metrics(app)


def register_extensions(app: Flask) -> None:
    from inventory_ai import auth
    from inventory_ai.database import install_connection_check, install_sqlite_pragmas
    from inventory_ai.extensions import (
        csrf,
        db,
        limiter,
        login_manager,
        migrate,
    )

    db.init_app(app)
    with app.app_context():
        install_sqlite_pragmas(db.engine)
        install_connection_check(db.engine)
    migrate.init_app(
        app, db, directory=str(Path(__file__).parent.parent / "migrations"), render_as_batch=True
    )
    # CSRF is checked by auth.pipeline.protect_writes, which knows bearer-token requests need none.
    app.config["WTF_CSRF_CHECK_DEFAULT"] = False
    csrf.init_app(app)
    config = app.extensions["inventory_ai.config"]
    # With Redis: Redis while it answers, the process's own counts while it does not (redis_fallback.py).
    app.config["RATELIMIT_STORAGE_URI"] = (
        f"fallback+{config.redis_url}" if config.redis_url else "swept-memory://"
    )
    limiter.init_app(app)
    login_manager.init_app(app)
    auth.init_app(app)


def register_limit_check(app: Flask) -> None:
    # Last: whether any limit applies before every view is known once every blueprint is in.
    from inventory_ai.extensions import drop_idle_limit_check

    drop_idle_limit_check(app)


def register_tracing(app: Flask) -> None:
    # OpenTelemetry's variables set: this process's provider, the app's requests and its engine.
    from inventory_ai import tracing

    tracing.init_app(app)


def register_assistant(app: Flask) -> None:
    from inventory_ai.assistant.extension import init_assistant

    init_assistant(app)


class DatabaseId(IntegerConverter):
    """`<int:…>` in every route: ids beyond the database's INTEGER are simply not found (404),
    instead of overflowing the driver."""

    def __init__(self, url_map, *args, **kwargs):
        kwargs.setdefault("max", 2**31 - 1)
        super().__init__(url_map, *args, **kwargs)


def register_blueprints(app: Flask) -> None:
    from inventory_ai.api import init_api
    from inventory_ai.web import bp as pages
    from inventory_ai.web import health

    app.url_map.converters["int"] = DatabaseId

    app.register_blueprint(health.bp)
    app.register_blueprint(pages)
    init_api(app)


def register_mcp(app: Flask) -> None:
    from inventory_ai.mcp.http import init_mcp

    init_mcp(app)


def register_errors(app: Flask) -> None:
    from inventory_ai.errors import init_errors

    init_errors(app)


def register_cli(app: Flask) -> None:
    from inventory_ai.cli import init_cli

    init_cli(app)
