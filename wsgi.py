"""Entry point: `flask --app wsgi …` and `gunicorn wsgi:app`."""

from inventory_ai import create_app

app = create_app()
