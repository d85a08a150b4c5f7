"""Builds the registry, the provider factory and the manager once per app."""

from __future__ import annotations

import logging
import re

from flask import Flask, current_app
from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory_ai.assistant.decisions import Decisions
from inventory_ai.assistant.manager import ToolExecutionManager
from inventory_ai.assistant.providers.base import ChatProvider
from inventory_ai.assistant.providers.offline.classifier import Example, built_in_examples, model_for
from inventory_ai.assistant.providers.offline.linking import Linker
from inventory_ai.assistant.providers.offline.provider import OfflineProvider
from inventory_ai.assistant.providers.offline.reading import Context
from inventory_ai.assistant.recovery import HEARTBEATS
from inventory_ai.assistant.registry import ToolRegistry
from inventory_ai.assistant.tools import builtin_tools
from inventory_ai.assistant.types import Message, ModelRequest
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.config import Config
from inventory_ai.extensions import db
from inventory_ai.models import ROLES, Material
from inventory_ai.services import clock
from inventory_ai.services.bookings import MOVEMENTS_BY_ROLE
from inventory_ai.services.catalogue_view import CatalogueView

EXTENSION_KEY = "inventory_ai.assistant"
DECISIONS_KEY = "inventory_ai.decisions"


def build_registry() -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.register(tool)
    return registry


def offline_lexicon(session: Session, registry: ToolRegistry) -> Context:
    """What the offline provider knows for one message: the catalogue through its read-only port
    over this request's session (services/catalogue_view.py: the small tables as a snapshot, the
    materials through the search index), the trained intent model (cached per process and intents
    version), who may do what."""
    catalogue = CatalogueView(session)
    intents = catalogue.directory.routines
    known = catalogue.directory.derived  # worked out once per snapshot of the intents
    if "intent_model" not in known:
        examples = [Example(phrase, i.name) for i in intents for phrase in i.keywords]
        known["intent_model"] = model_for(examples + built_in_examples())
    model = known["intent_model"]
    settings = registry.settings(session)
    who_can = {
        tool.name: [role for role in ROLES if registry.permits(tool, settings.get(tool.name), role)]
        for tool in registry.all()
    }
    return Context(
        linker=Linker(catalogue),
        guess=model.guess,
        offered=set(),
        role=None,
        today=clock.today(),
        intents={i.name: (i.tool_name, dict(i.default_arguments)) for i in intents},
        who_can=who_can,
        movements_by_role=MOVEMENTS_BY_ROLE,
        home_warehouse=catalogue.main_store,
        tool_labels={tool.name: tool.labels for tool in registry.all()},
    )


def offline_warm_up(app: Flask) -> int:
    """What a worker's first offline answers would otherwise pay for, done before it takes requests
    (gunicorn.conf.py with INVENTORY_AI_OFFLINE_WARM_UP=1, then `gc.freeze()`): the intent model's
    fit (0.3-0.5 s of CPU) and each query shape's statements, built on first use (several ms each).
    Intents' phrases are read as the admin would say them, with one of the catalogue's first two
    materials in each (its Chinese name in a Chinese phrase, its English name in an English one);
    nothing is written. About a second of CPU (every phrase, 487 of them, took 4.2 s). Returns the
    phrases read, 0 when the offline assistant does not answer here or the database cannot be read
    yet."""
    if "offline" not in answerers(app.extensions["inventory_ai.config"]):
        return 0
    with app.app_context():
        session, registry = db.session, manager().registry
        try:
            named = session.scalars(
                select(Material).where(Material.active).order_by(Material.id).limit(2)
            ).all()
            # Of each intent, about six phrases spread over its list (Chinese and English) that need
            # a material only (no place, amount or date made up), the two materials in turn.
            said = []
            for routine in CatalogueView(session).directory.routines:
                usable = [k for k in routine.keywords if not re.search(r"\{[a-ln-z]\}", k)]
                said += usable[:: max(1, len(usable) // 6)]
            phrases = [
                k.replace("{m}", m.name_en if k.isascii() else m.name_zh)
                for k, m in zip(said, named * len(said), strict=False)
            ]
            tools = registry.toolbox_for("admin", session).specs()
            for phrase in dict.fromkeys(phrases):
                asked = (Message("system", ""), Message("user", phrase))
                OfflineProvider(lambda: offline_lexicon(session, registry)).reply(
                    ModelRequest(messages=asked, tools=tools, role="admin")
                )
                session.rollback()
        except Exception:  # noqa: BLE001 - not migrated or not reachable yet: the first requests pay
            logging.getLogger(__name__).warning("offline warm-up skipped", exc_info=True)
            session.rollback()
            return 0
        return len(set(phrases))


def answerers(config: Config) -> list[str]:
    """Who answers, in order: the configured model, then INVENTORY_AI_LLM_FALLBACK (other Qwen models
    and/or "offline") when it fails after its retries or its breaker is open."""
    names = [config.llm_model if config.llm_provider == "dashscope" else "offline"]
    return names + [n for n in config.llm_fallback if n not in names]


def provider_factory(config: Config, registry: ToolRegistry):
    """The providers of `answerers`, in their order, for one session."""
    names = answerers(config)
    qwen: dict[str, ChatProvider] = {}
    if any(n != "offline" for n in names):
        from inventory_ai.assistant.providers.breaker import shared_breaker
        from inventory_ai.assistant.providers.dashscope import DashScopeProvider
        from inventory_ai.assistant.providers.model_http import model_http_session

        http = model_http_session()
        for name in (n for n in names if n != "offline"):
            qwen[name] = DashScopeProvider(
                api_key=config.dashscope_api_key or "",
                model=name,
                base_url=config.dashscope_base_url,
                timeout_seconds=config.model_timeout_seconds,
                backoff_seconds=config.model_backoff_seconds,
                breaker=shared_breaker(config.redis_url, name),
                http=http,
            )

    def providers(session: Session) -> tuple[ChatProvider, ...]:
        return tuple(
            OfflineProvider(lambda: offline_lexicon(session, registry)) if name == "offline" else qwen[name]
            for name in names
        )

    return providers


def init_assistant(app: Flask) -> None:
    config: Config = app.extensions["inventory_ai.config"]
    registry = build_registry()
    registry.watch_settings(ChangeMarker(app.instance_path, "tool-settings-changed"))
    answers = app.extensions[EXTENSION_KEY] = ToolExecutionManager(
        registry=registry,
        provider_factory=provider_factory(config, registry),
        engine=lambda: db.engine,
        max_iterations=config.max_tool_iterations,
        max_calls_per_message=config.max_tool_calls_per_message,
        result_budget_chars=config.tool_result_budget_chars,
        answer_deadline_seconds=config.answer_deadline_seconds,
        heartbeat_seconds=config.answer_heartbeat_seconds,
        stale_after_seconds=config.answer_stale_seconds,
        daily_token_budget=config.daily_token_budget,
        history_token_budget=config.history_token_budget,
        signoff_value=config.signoff_value,
        signoff_hours=config.signoff_expiry_hours,
    )
    app.extensions[DECISIONS_KEY] = Decisions(answers)
    if not config.testing:  # a served app sweeps stale answers even while idle (recovery.py)
        with app.app_context():
            HEARTBEATS.watch(db.engine, answers.recovery.end_stale, config.answer_heartbeat_seconds)


def manager() -> ToolExecutionManager:
    return current_app.extensions[EXTENSION_KEY]


def decisions() -> Decisions:
    return current_app.extensions[DECISIONS_KEY]
