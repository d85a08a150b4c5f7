"""The app's Flask class: Flask, with `ensure_sync` answered from a function's code flags."""

from __future__ import annotations

import sys
from collections.abc import Callable
from inspect import CO_COROUTINE
from typing import Any

from flask import Flask

# Python 3.12's inspect.markcoroutinefunction makes a plain function count as a coroutine function
# without its code flag: there, Flask's own check decides.
_FLAGS_DECIDE = sys.version_info < (3, 12)


class App(Flask):
    """Flask asks `ensure_sync` of every hook, view and decorator it calls (25 times a chat message),
    and Flask's answers it with inspect.iscoroutinefunction: about 8 Python calls each, 3 % of a
    message's calls. A plain function, or a method of one, whose code is not a coroutine's is
    returned as it is here, as inspect would decide; anything else (an `async def`, a partial, a
    callable object) goes to Flask's own check."""

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        code = getattr(getattr(func, "__func__", func), "__code__", None)
        if _FLAGS_DECIDE and code is not None and not code.co_flags & CO_COROUTINE:
            return func
        return super().ensure_sync(func)
