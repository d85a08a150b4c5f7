"""Nothing can forget a person's warehouses: every stock reader takes `sites` as a required keyword
argument (no default that would mean "everywhere"), and a search's stock filter without them is a
bug that fails loudly, never a search of every warehouse."""

from __future__ import annotations

import inspect

import pytest

from inventory_ai.assistant.tools.base import ToolContext
from inventory_ai.services import approvals, stats
from inventory_ai.services.search import SearchFilters, search_materials

READERS = [
    stats.inventory_stats,
    stats.low_stock,
    stats.stock_levels_of,
    stats.movements,
    stats.stock_history,
    stats.stock_by_material,
    stats.recent_movements,
    approvals.waiting,
]


@pytest.mark.parametrize("reader", READERS, ids=lambda f: f.__name__)
def test_every_stock_reader_requires_sites(reader):
    parameter = inspect.signature(reader).parameters["sites"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is inspect.Parameter.empty


def test_a_tools_context_requires_sites():
    assert "sites" in inspect.signature(ToolContext).parameters
    assert inspect.signature(ToolContext).parameters["sites"].default is inspect.Parameter.empty


def test_a_search_stock_filter_without_sites_fails_loudly(session):
    with pytest.raises(ValueError, match="sites"):
        search_materials(session, "面粉", SearchFilters(in_stock=True))
    assert search_materials(session, "面粉", SearchFilters()).total > 0  # the catalogue is everyone's
