"""The app's Flask class answers `ensure_sync` from code flags: the same answer as Flask's own for
every kind of callable it is handed, async ones still wrapped."""

from __future__ import annotations

import functools
import inspect

from flask import Flask

from inventory_ai.flask_app import App


def plain():
    return "plain"


async def coroutine():
    return "coroutine"


class Holder:
    def method(self):
        return "method"

    async def async_method(self):
        return "async method"

    @staticmethod
    def static():
        return "static"

    def __call__(self):
        return "called"


def _callables():
    holder = Holder()

    def closure():
        return holder

    return [
        plain, coroutine, holder.method, holder.async_method, Holder.static, holder, closure,
        lambda: None, functools.partial(plain), functools.partial(coroutine), print,
    ]  # fmt: skip


def test_ensure_sync_agrees_with_flask_for_every_kind_of_callable(monkeypatch):
    wrapped = []
    monkeypatch.setattr(Flask, "async_to_sync", lambda self, func: wrapped.append(func) or ("wrapped", func))
    app = App(__name__)
    for func in _callables():
        assert app.ensure_sync(func) == Flask.ensure_sync(app, func), func
        assert (app.ensure_sync(func) is func) == (not inspect.iscoroutinefunction(func)), func
    assert len(wrapped) == 3 * 3  # the coroutine, the async method, the coroutine's partial: 3 asks each


def test_the_app_is_made_of_it(app):
    assert isinstance(app, App)
