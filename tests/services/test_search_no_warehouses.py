"""A person whose warehouses are none at all (`warehouses: []`, services/sites.py) searches the
catalogue like anyone, and a stock filter (in stock, one warehouse) finds nothing for them: never a
database error. The stock probe's conditions fold to FALSE there, and an EXISTS with no table is
not SQL that SQLite accepts ("no tables specified")."""

from __future__ import annotations

import pytest

from inventory_ai.services.search import SearchFilters, search_materials
from inventory_ai.services.sites import Sites, find_warehouse

NOWHERE = Sites(frozenset(), frozenset())


@pytest.mark.parametrize("query", ["粉", "面粉", "flour", "rye flour", ""])
def test_a_stock_filter_finds_nothing_for_someone_with_no_warehouses(session, query):
    cold = find_warehouse(session, "Cold Store").id
    for filters in (
        SearchFilters(in_stock=True, sites=NOWHERE),
        SearchFilters(warehouse_id=cold, sites=NOWHERE),
        SearchFilters(in_stock=True, warehouse_id=cold, sites=NOWHERE),
    ):
        page = search_materials(session, query, filters, limit=5)
        assert (page.materials, page.total) == ([], 0), (query, filters)
    assert search_materials(session, "面粉", SearchFilters(sites=NOWHERE), limit=5).total > 0
