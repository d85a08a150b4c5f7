"""The staff pages: one blueprint, with its routes in views.py (log in, chat, decisions),
overview.py (/overview) and signoffs.py (/approvals); health.py is the probes' own."""

from flask import Blueprint

bp = Blueprint(
    "web", __name__, template_folder="templates", static_folder="static", static_url_path="/static"
)

# The routes attach themselves to `bp` as they are imported (microblog's blueprint packages).
from inventory_ai.web import overview, signoffs, views  # noqa: E402, F401
