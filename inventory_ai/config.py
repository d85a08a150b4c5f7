"""One configuration, read from the environment (every variable is listed in docs/operations.md)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
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


def _decimal(name: str, default: Decimal) -> Decimal:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from exc
    if not value.is_finite() or value < 0:
        raise ConfigError(f"{name} must be a number of at least 0, got {raw!r}")
    return value


# Estimates (CNY per 1,000 tokens, input / output) from DashScope's public list prices; set
# INVENTORY_AI_MODEL_PRICES for your contract, e.g. "qwen-plus=0.0008/0.002;qwen-max=0.0024/0.0096".
MODEL_PRICES = {"qwen-plus": (0.0008, 0.002), "qwen-turbo": (0.0003, 0.0006), "qwen-max": (0.0024, 0.0096)}


# Tokens of conversation history sent with each model call (assistant/history.py): the current turn
# whole, then earlier turns newest first, older ones summarised. qwen-plus reads 131,072 tokens, but
# every call of an answer sends the history again (cost, time to the first word), and a fallback may
# be qwen-max, whose window is 32,768: 16,000 of history + the system prompt (~130) + the admin's
# tool definitions (~900) + an answer of up to 8,192 fit even there (docs/operations.md).
HISTORY_TOKEN_BUDGET = 16_000


def _prices(raw: str) -> dict:
    prices = dict(MODEL_PRICES)
    for item in (p.strip() for p in raw.split(";") if p.strip()):
        try:
            model, rates = item.split("=")
            cost_in, cost_out = (float(x) for x in rates.split("/"))
        except ValueError as exc:
            raise ConfigError(f"INVENTORY_AI_MODEL_PRICES: {item!r} is not model=input/output") from exc
        prices[model.strip()] = (cost_in, cost_out)
    return prices


def _timezone(name: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"INVENTORY_AI_TIMEZONE: {name!r} is not a time zone (e.g. Asia/Shanghai)") from exc
    return name


def _proxies(raw: str) -> tuple[str, ...]:
    import ipaddress

    proxies = tuple(p.strip() for p in raw.split(",") if p.strip())
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError as exc:
            raise ConfigError(
                f"INVENTORY_AI_TRUSTED_PROXIES: {proxy!r} is not an address or network"
            ) from exc
    return proxies


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
    # A whole answer (model rounds and tools) ends by this deadline; a running answer whose process
    # stopped beating for answer_stale_seconds is ended as interrupted (docs/operations.md).
    answer_deadline_seconds: float = 120.0
    answer_heartbeat_seconds: float = 10.0
    answer_stale_seconds: float = 45.0
    # A request's body is read within this (under gunicorn; inventory_ai/body_deadline.py), else 408.
    body_read_seconds: int = 15
    # What answers when the model fails (Qwen model names and/or "offline"), and tokens per user per day.
    llm_fallback: tuple[str, ...] = ("offline",)
    daily_token_budget: int | None = None
    # Tokens of history sent with each model call (HISTORY_TOKEN_BUDGET above).
    history_token_budget: int = HISTORY_TOKEN_BUDGET
    # CNY per 1,000 input and output tokens, for the admins' cost estimate (docs/operations.md).
    model_prices: dict = field(default_factory=lambda: dict(MODEL_PRICES))
    # Bookings worth more than this (CNY) by someone who is not a manager or admin need a second
    # person's sign-off, which expires after signoff_expiry_hours.
    signoff_value: Decimal = Decimal(5000)
    signoff_expiry_hours: float = 24.0
    chat_rate_limit: str = "30 per minute"
    cors_origins: tuple[str, ...] = ()
    # The plant's time zone: what "today" and a date people say mean (services/clock.py).
    timezone: str = "Asia/Shanghai"
    # Peers whose X-Forwarded-For/-Proto are believed in production (the TLS-terminating proxy).
    trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")
    db_pool_size: int = 20
    db_pool_timeout: float = 10.0
    # `flask mcp`: the API token of the user the stdio MCP server acts as (docs/mcp.md).
    mcp_token: str | None = field(default=None, repr=False)
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
        stale = _int("INVENTORY_AI_ANSWER_STALE_SECONDS", 45)
        if not 5 <= stale <= 600:
            raise ConfigError("INVENTORY_AI_ANSWER_STALE_SECONDS must be between 5 and 600")
        fallback = tuple(
            n.strip() for n in os.environ.get("INVENTORY_AI_LLM_FALLBACK", "offline").split(",") if n.strip()
        )
        if any(n != "offline" for n in fallback) and not api_key:
            raise ConfigError("INVENTORY_AI_LLM_FALLBACK names Qwen models: they need DASHSCOPE_API_KEY")
        budget = _int("INVENTORY_AI_DAILY_TOKEN_BUDGET", 0) or None
        if budget is not None and budget < 0:
            raise ConfigError("INVENTORY_AI_DAILY_TOKEN_BUDGET must be a positive number of tokens")
        history = _int("INVENTORY_AI_HISTORY_TOKEN_BUDGET", HISTORY_TOKEN_BUDGET)
        if not 1000 <= history <= 1_000_000:
            raise ConfigError("INVENTORY_AI_HISTORY_TOKEN_BUDGET must be between 1000 and 1000000 tokens")
        signoff_value = _decimal("INVENTORY_AI_SIGNOFF_VALUE", Decimal(5000))
        signoff_hours = _int("INVENTORY_AI_SIGNOFF_EXPIRY_HOURS", 24)
        if signoff_hours < 1:
            raise ConfigError("INVENTORY_AI_SIGNOFF_EXPIRY_HOURS must be at least 1")
        body_seconds = _int("INVENTORY_AI_BODY_READ_SECONDS", 15)
        if not 1 <= body_seconds <= 600:
            raise ConfigError("INVENTORY_AI_BODY_READ_SECONDS must be from 1 to 600")
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
            timezone=_timezone(os.environ.get("INVENTORY_AI_TIMEZONE") or "Asia/Shanghai"),
            trusted_proxies=_proxies(os.environ.get("INVENTORY_AI_TRUSTED_PROXIES", "127.0.0.1,::1")),
            answer_stale_seconds=stale,
            body_read_seconds=body_seconds,
            signoff_value=signoff_value,
            llm_fallback=fallback,
            daily_token_budget=budget,
            history_token_budget=history,
            model_prices=_prices(os.environ.get("INVENTORY_AI_MODEL_PRICES", "")),
            signoff_expiry_hours=signoff_hours,
            answer_heartbeat_seconds=min(10.0, stale / 4),
            mcp_token=os.environ.get("INVENTORY_AI_MCP_TOKEN", "").strip() or None,
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
        # Threads share the file; each gets its own connection. Writers take turns (database.py),
        # and busy_timeout still bounds a wait for SQLite's lock.
        from inventory_ai.database import SQLiteConnection

        return {
            "connect_args": {"check_same_thread": False, "timeout": 15, "factory": SQLiteConnection},
            **pool,
        }
    # A connection the server ended is replaced at checkout (database.install_connection_check).
    # No parallel plans: every read here is an index range that stops after a page or a capped
    # count, and a parallel plan gives up that early stop (workers sort what they read first) and
    # starts workers on every call; at 1,000,000 materials it made searches 2-3x slower.
    return {**pool, "connect_args": {"options": "-c max_parallel_workers_per_gather=0"}}


def config_for_tests(database_url: str) -> Config:
    return Config(
        env="development",
        database_url=database_url,
        secret_key="test-secret-key",
        llm_provider="offline",
        demo_password="demo-password",
        testing=True,
    )
