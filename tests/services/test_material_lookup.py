"""Finding a material at the catalogue's edges: a reference either finds one material or says why, and
a search never counts what it does not return."""

from __future__ import annotations

import pytest

from inventory_ai.errors import DomainError
from inventory_ai.services.catalog import find_material
from inventory_ai.services.search import search_materials


@pytest.mark.parametrize(
    "ref", ["可可 White", "可可 white chocolate", "M0", "面粉 X", "chocolate 可", "  ", "%", "_"]
)
def test_finding_a_material_either_finds_one_or_says_why(session, ref):
    try:
        material = find_material(session, ref)
    except DomainError as exc:
        assert exc.message
    else:
        assert material.code


def test_a_search_never_counts_what_it_does_not_return(session):
    for query in ["可可 White", "可可 white", "white 可可", "面粉 bread"]:
        page = search_materials(session, query, limit=5)
        assert (page.total == 0) == (page.materials == []), query
