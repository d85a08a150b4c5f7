"""Counting Qwen tokens, for the history budget (history.py).

The tokenizer is the one the dashscope package ships (`dashscope.get_tokenizer`: tiktoken over the
vocabulary bundled in the package, read from disk; nothing is downloaded). It is loaded once per
process, on first use, because it costs 0.3-0.4 s and about 65 MB: a process whose conversations
stay short (counted by their UTF-8 bytes first, see `bound`) never loads it.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Hashable

from inventory_ai.logging import get_logger

log = get_logger(__name__)

_lock = threading.Lock()
_count: Callable[[str], int] | None = None


def bound(text: str) -> int:
    """At least as many as the tokens of `text`, without the tokenizer: its UTF-8 bytes after the
    tokenizer's own NFC normalisation (every Qwen token stands for at least one byte)."""
    return len(unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")) if text else 0


def count(text: str) -> int:
    """Qwen tokens of `text`, counted as ordinary text (text that looks like a control token such as
    <|im_end|> is counted as the characters it is, as the API treats a message's content)."""
    return _counter()(text) if text else 0


def _counter() -> Callable[[str], int]:
    global _count
    if _count is None:
        with _lock:
            if _count is None:
                _count = _load()
    return _count


def _load() -> Callable[[str], int]:
    try:
        import dashscope

        tokenizer = dashscope.get_tokenizer("qwen-plus")
    except Exception as exc:  # tiktoken not installed, a broken vocabulary file
        # Never fail an answer over a count: bytes are an upper bound, so less history is kept.
        log.warning("tokenizer_unavailable", error=f"{type(exc).__name__}: {exc}", fallback="utf8_bytes")
        return bound
    no_special: set[str] = set()

    def tokens(text: str) -> int:
        try:
            return len(tokenizer.encode(text, allowed_special=no_special))
        except Exception:  # text the tokenizer cannot take (a lone surrogate): its upper bound
            return bound(text)

    return tokens


class Counts:
    """Token counts of things that never change once stored (a finished turn), by key, for this
    process: a long conversation is counted once, not at every model call. Thread-safe, bounded."""

    def __init__(self, size: int = 20_000):
        self.size = size
        self._data: OrderedDict[Hashable, int] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], int]) -> int:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = compute()
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value
