"""One configuration, read from the environment (names in shared/CONTRACT.md)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path


class ConfigError(RuntimeError):
    """A setting is missing or invalid; the app refuses to start."""


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from exc


def _instance_secret(instance_path: Path) -> str:
    """Development only: a key generated once and kept in instance/, so sessions survive restarts."""
    key_file = instance_path / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    instance_path.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


@dataclass
class Config:
    env: str = "development"
    database_url: str = ""
    secret_key: str = ""
    redis_url: str | None = None
    llm_provider: str = "offline"
    llm_model: str = "qwen-plus"
    max_tool_iterations: int = 5
    demo_password: str | None = None
    dashscope_api_key: str | None = field(default=None, repr=False)
    dashscope_base_url: str | None = None
    # Loop limits that are ours to choose (docs/architecture.md).
    max_tool_calls_per_message: int = 20
    tool_result_budget_chars: int = 6000
    model_timeout_seconds: float = 60.0
    model_backoff_seconds: float = 0.5
    chat_rate_limit: str = "30 per minute"
    cors_origins: tuple[str, ...] = ()
    db_pool_size: int = 20
    db_pool_timeout: float = 10.0
    testing: bool = False

    @classmethod
    def from_env(cls, instance_path: Path) -> Config:
        env = os.environ.get("INVENTORY_AI_ENV", "development")
        if env not in ("development", "production"):
            raise ConfigError(f"INVENTORY_AI_ENV must be development or production, got {env!r}")
        secret = os.environ.get("INVENTORY_AI_SECRET_KEY", "")
        if not secret:
            if env == "production":
                raise ConfigError("INVENTORY_AI_SECRET_KEY is required when INVENTORY_AI_ENV=production")
            secret = _instance_secret(instance_path)
        api_key = os.environ.get("DASHSCOPE_API_KEY") or None
        provider = os.environ.get("INVENTORY_AI_LLM_PROVIDER") or ("dashscope" if api_key else "offline")
        if provider not in ("dashscope", "offline"):
            raise ConfigError(f"INVENTORY_AI_LLM_PROVIDER must be dashscope or offline, got {provider!r}")
        if provider == "dashscope" and not api_key:
            raise ConfigError("INVENTORY_AI_LLM_PROVIDER=dashscope needs DASHSCOPE_API_KEY")
        iterations = _int("INVENTORY_AI_MAX_TOOL_ITERATIONS", 5)
        if not 1 <= iterations <= 50:
            raise ConfigError("INVENTORY_AI_MAX_TOOL_ITERATIONS must be between 1 and 50")
        pool_size = _int("INVENTORY_AI_DB_POOL_SIZE", 20)
        if pool_size < 1:
            raise ConfigError("INVENTORY_AI_DB_POOL_SIZE must be at least 1")
        return cls(
            env=env,
            database_url=os.environ.get("INVENTORY_AI_DATABASE_URL")
            or f"sqlite:///{instance_path / 'inventory_ai.db'}",
            secret_key=secret,
            redis_url=os.environ.get("INVENTORY_AI_REDIS_URL") or None,
            llm_provider=provider,
            llm_model=os.environ.get("INVENTORY_AI_LLM_MODEL") or "qwen-plus",
            max_tool_iterations=iterations,
            demo_password=os.environ.get("INVENTORY_AI_DEMO_PASSWORD") or None,
            dashscope_api_key=api_key,
            dashscope_base_url=os.environ.get("DASHSCOPE_HTTP_BASE_URL") or None,
            chat_rate_limit=os.environ.get("INVENTORY_AI_CHAT_RATE_LIMIT") or "30 per minute",
            cors_origins=tuple(
                o.strip() for o in os.environ.get("INVENTORY_AI_CORS_ORIGINS", "").split(",") if o.strip()
            ),
            db_pool_size=pool_size,
        )

    @property
    def production(self) -> bool:
        return self.env == "production"

    def flask_settings(self) -> dict:
        return {
            "SECRET_KEY": self.secret_key,
            "SQLALCHEMY_DATABASE_URI": self.database_url,
            "SQLALCHEMY_ENGINE_OPTIONS": engine_options(
                self.database_url, self.db_pool_size, self.db_pool_timeout
            ),
            "TESTING": self.testing,
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": "Lax",
            "SESSION_COOKIE_SECURE": self.production,
            "REMEMBER_COOKIE_HTTPONLY": True,
            "REMEMBER_COOKIE_SECURE": self.production,
            "MAX_CONTENT_LENGTH": 1 * 1024 * 1024,
            "WTF_CSRF_ENABLED": True,
            "CHAT_RATE_LIMIT": self.chat_rate_limit,
            "API_TITLE": "inventory_ai",
            "API_VERSION": "v1",
            "OPENAPI_VERSION": "3.0.3",
            "OPENAPI_URL_PREFIX": "/api",
            "OPENAPI_JSON_PATH": "openapi.json",
        }


def engine_options(url: str, pool_size: int = 20, pool_timeout: float = 10.0) -> dict:
    # Kept connections per process. Nothing holds one while the model talks, so far fewer than
    # the threads is enough; a burst beyond them opens up to as many again, then waits up to
    # pool_timeout (answered 503). Too small a pool reconnects under load: a forked backend on
    # PostgreSQL, a file opened and its pragmas run again on SQLite.
    pool = {"pool_size": pool_size, "max_overflow": pool_size, "pool_timeout": pool_timeout}
    if url.startswith("sqlite"):
        # Threads share the file; each gets its own connection. busy_timeout lets writers queue.
        return {"connect_args": {"check_same_thread": False, "timeout": 15}, **pool}
    return {"pool_pre_ping": True, **pool}


def config_for_tests(database_url: str) -> Config:
    return Config(
        env="development",
        database_url=database_url,
        secret_key="test-secret-key",
        llm_provider="offline",
        demo_password="demo-password",
        testing=True,
    )
