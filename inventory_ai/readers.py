"""The language a person reads: the one they chose (kept with the user, web/i18n.py's switch), else
their browser's Accept-Language, else Chinese. Pages, the descriptions written for them and the
API's views for a person all ask here, so a viewer sees one language."""

from __future__ import annotations

from flask import has_request_context, request

LANGUAGES = ("zh", "en")


def reader_language(user=None) -> str:
    chosen = getattr(user, "language", None)
    if chosen in LANGUAGES:
        return chosen
    if has_request_context():
        return request.accept_languages.best_match(LANGUAGES, default="zh") or "zh"
    return "zh"
