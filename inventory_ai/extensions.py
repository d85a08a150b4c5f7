"""Extension singletons, bound to the app in create_app."""

from flask import current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

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


def _login_key() -> str:
    """Failed logins are counted per address and username, so one user's typos lock no one else out."""
    username = (request.form.get("username") or (request.get_json(silent=True) or {}).get("username") or "")[
        :64
    ]
    return f"{get_remote_address()}:{username}"


# Storage: Redis when INVENTORY_AI_REDIS_URL is set (shared by every process), else in-process.
limiter = Limiter(key_func=get_remote_address, headers_enabled=True)
LOGIN_LIMIT = "5 per minute"
login_limit = limiter.limit(
    LOGIN_LIMIT, key_func=_login_key, deduct_when=lambda response: response.status_code == 401
)


def _caller_key() -> str:
    from flask_login import current_user

    return f"user:{current_user.id}" if current_user.is_authenticated else f"ip:{get_remote_address()}"


# Asking the assistant costs model time: limited per user (per address for the anonymous).
chat_limit = limiter.limit(lambda: current_app.config["CHAT_RATE_LIMIT"], key_func=_caller_key)
