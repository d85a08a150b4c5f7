"""A served worker warms the offline assistant before its first request when
INVENTORY_AI_OFFLINE_WARM_UP=1 (gunicorn.conf.py, `offline_warm_up`): the intent model fitted and
the query shapes' statements built, nothing written."""

from __future__ import annotations

from sqlalchemy import func, select

from inventory_ai.assistant.extension import offline_warm_up
from inventory_ai.config import config_for_tests
from inventory_ai.extensions import db
from inventory_ai.services.catalogue_view import CatalogueView


def _rows(session) -> dict[str, int]:
    return {t.name: session.scalar(select(func.count()).select_from(t)) for t in db.metadata.sorted_tables}


def test_the_warm_up_reads_every_intents_phrases_fits_the_model_and_writes_nothing(app, session):
    before = _rows(session)
    assert offline_warm_up(app) > 40
    assert _rows(session) == before
    assert "intent_model" in CatalogueView(session).directory.derived  # the first message fits nothing


def test_no_warm_up_where_the_offline_assistant_does_not_answer(app_with, database_url):
    config = config_for_tests(database_url)
    config.llm_provider, config.llm_model, config.llm_fallback = "dashscope", "qwen-plus", ()
    assert offline_warm_up(app_with(config)) == 0
