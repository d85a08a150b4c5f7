"""Builds the registry, the provider factory and the manager once per app."""

from __future__ import annotations

from flask import Flask, current_app
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from inventory_ai.assistant.manager import ToolExecutionManager
from inventory_ai.assistant.providers.base import ChatProvider
from inventory_ai.assistant.providers.offline import IntentRule, Lexicon, OfflineProvider, Place
from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.tools import builtin_tools
from inventory_ai.config import Config
from inventory_ai.extensions import db
from inventory_ai.models import Category, StockLevel, Warehouse
from inventory_ai.services.catalog import find_material
from inventory_ai.services.intents import active_intents
from inventory_ai.services.search import search_materials

EXTENSION_KEY = "inventory_ai.assistant"


def build_registry() -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.register(tool)
    return registry


def offline_lexicon(session: Session) -> Lexicon:
    def home_warehouse(material_ref: str) -> str | None:
        try:
            material = find_material(session, material_ref)
        except Exception:
            return None
        return session.scalar(
            select(Warehouse.name_zh)
            .join(StockLevel, StockLevel.warehouse_id == Warehouse.id)
            .where(StockLevel.material_id == material.id)
            .order_by(StockLevel.quantity.desc(), Warehouse.code)
            .limit(1)
        )

    return Lexicon(
        intents=tuple(
            IntentRule(i.name, tuple(i.keywords), i.tool_name, dict(i.default_arguments or {}), i.priority)
            for i in active_intents(session)
        ),
        warehouses=tuple(
            Place(w.code, w.name_zh, w.name_en)
            for w in session.scalars(select(Warehouse).order_by(Warehouse.code))
        ),
        categories=tuple(
            Place(c.code, c.name_zh, c.name_en)
            for c in session.scalars(select(Category).order_by(func.length(Category.name_zh).desc()))
        ),
        home_warehouse=home_warehouse,
        known=lambda phrase: search_materials(session, phrase, limit=1).total > 0,
    )


def provider_factory(config: Config):
    if config.llm_provider == "dashscope":
        from inventory_ai.assistant.providers.dashscope import (
            DashScopeProvider,
            model_http_session,
            shared_breaker,
        )

        breaker = shared_breaker(config.redis_url)
        http = model_http_session()

        def make_dashscope(_session: Session) -> ChatProvider:
            return DashScopeProvider(
                api_key=config.dashscope_api_key or "",
                model=config.llm_model,
                base_url=config.dashscope_base_url,
                timeout_seconds=config.model_timeout_seconds,
                backoff_seconds=config.model_backoff_seconds,
                breaker=breaker,
                http=http,
            )

        return make_dashscope

    def make_offline(session: Session) -> ChatProvider:
        return OfflineProvider(offline_lexicon(session))

    return make_offline


def init_assistant(app: Flask) -> None:
    config: Config = app.extensions["inventory_ai.config"]
    app.extensions[EXTENSION_KEY] = ToolExecutionManager(
        registry=build_registry(),
        provider_factory=provider_factory(config),
        engine=lambda: db.engine,
        max_iterations=config.max_tool_iterations,
        max_calls_per_message=config.max_tool_calls_per_message,
        result_budget_chars=config.tool_result_budget_chars,
    )


def manager() -> ToolExecutionManager:
    return current_app.extensions[EXTENSION_KEY]
