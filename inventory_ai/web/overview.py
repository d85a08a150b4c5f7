"""The overview page (/overview): stock value by warehouse and by category, what is below its reorder
point, and today's movements, for a look instead of a question.

Each part is shown to those whose tools may show it (their role and the admins' settings), the same
rule as in chat: whoever may not ask for stock figures does not see them here either.
"""

from __future__ import annotations

from decimal import Decimal

from flask import render_template
from flask_login import login_required

from inventory_ai.assistant.extension import manager
from inventory_ai.auth import authenticated_user
from inventory_ai.extensions import db
from inventory_ai.services import shown, sites, stats
from inventory_ai.web import bp, charts
from inventory_ai.web.i18n import language, place_names, strings
from inventory_ai.web.tables import TABLE_COLUMNS, Cells, rows_table

LOW_STOCK_ROWS = 50
TODAY_ROWS = 100
# Today's movements: the movement table's columns, with the time of day instead of the date.
TODAY_COLUMNS = [("time", "time"), *(c for c in TABLE_COLUMNS["movements"] if c[0] != "date")]


@bp.get("/overview")
@login_required
def overview():
    user = authenticated_user()
    lang = language()
    t = strings(lang)
    cells = Cells(lang, t, place_names(lang))
    offered = set(manager().registry.toolbox_for(user.role, db.session).names)
    everywhere = stats.Scope()
    mine = sites.of_user(db.session, user)  # the warehouses this person works in, read now
    page: dict = {"only": only_label(mine, lang, t)}
    if "get_inventory_stats" in offered:
        figures = stats.inventory_stats(db.session, everywhere, sites=mine)

        def cny(value: Decimal) -> str:
            return t["yuan"].format(value=shown.money(value, 0))

        page["figures"] = figures
        page["total_value"] = t["yuan"].format(value=shown.money(figures["total_value_cny"]))
        page["by_warehouse"] = charts.bars(
            [(cells.place(r["warehouse"]), Decimal(r["value_cny"])) for r in figures["by_warehouse"]],
            t["value_by_warehouse"],
            cny,
        )
        page["by_category"] = charts.bars(
            [(cells.place(r["category"]), Decimal(r["value_cny"])) for r in figures["by_category"]],
            t["value_by_category"],
            cny,
        )
    if "list_low_stock" in offered:
        low = stats.low_stock(db.session, everywhere, limit=LOW_STOCK_ROWS, sites=mine)
        page["low"] = rows_table(low["items"], TABLE_COLUMNS["items"], cells)
        page["low"].total = low["total"]
    if "get_stock_movements" in offered:
        found = stats.movements(db.session, stats.MovementFilter(days=1), limit=TODAY_ROWS, sites=mine)
        page["today"] = rows_table([_movement(mv) for mv in found["rows"]], TODAY_COLUMNS, cells)
        page["today"].total = found["total"]
    return render_template("overview.html", **page)


def only_label(mine: sites.Sites, lang: str, t: dict) -> str | None:
    """ "冷库 only" / "Cold Store only": what a person limited to some warehouses sees; None for all."""
    if mine.everywhere:
        return None
    joiner = "、" if lang == "zh" else ", "
    return t["sites_only"].format(names=joiner.join(sites.names(db.session, mine, lang)) or "—")


def _movement(mv) -> dict:
    """One ledger row as the movement tables show it, at the plant's time of day."""
    return {
        "time": shown.when(mv.created_at, "time"),
        **stats.movement_row(mv),
    }
