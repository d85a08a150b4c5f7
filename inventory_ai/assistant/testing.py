"""A scripted model, shipped for tests and tools (as openai-agents ships `testing/`): canned replies
in order, each request recorded so a test can see what the model was shown. Put it in with the
manager's seam: `with manager.override(provider=ScriptedProvider(calls(call("search_materials",
{"keyword": "面粉"})), answer("…"))): ...`. The way simonw/llm tests its chains: the loop is
deterministic.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator

from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.types import ModelReply, ModelRequest, TextDelta, ToolCall, Usage

Step = ModelReply | ProviderError | Callable[[ModelRequest], ModelReply]


def call(name: str, arguments: dict | str | None = None, call_id: str | None = None) -> ToolCall:
    """A tool call as the model would ask for it (arguments as JSON text unless given as text)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)
    return ToolCall(call_id or f"call_{name}_{abs(hash(raw)) % 10_000}", name, raw)


def calls(*tool_calls: ToolCall, text: str = "") -> ModelReply:
    """A reply that asks for these calls, in one round."""
    return ModelReply(text=text, tool_calls=tuple(tool_calls), usage=Usage(10, 5), finish_reason="tool_calls")


def answer(text: str) -> ModelReply:
    """A final reply: no calls."""
    return ModelReply(text=text, usage=Usage(20, 8), finish_reason="stop")


class ScriptedProvider:
    """A ChatProvider that answers each request with its next step: a reply, a ProviderError to
    raise, or a function of the request that returns a reply."""

    name = "scripted"
    model = "scripted-1"
    costs_tokens = False

    def __init__(self, *steps: Step):
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    def stream(self, request: ModelRequest) -> Iterator:
        with self._lock:
            self.requests.append(request)
            if not self.steps:
                raise AssertionError("the scripted model was called more often than scripted")
            step = self.steps.pop(0)
        if isinstance(step, ProviderError):
            raise step
        reply = step(request) if callable(step) else step
        if reply.text:
            yield TextDelta(reply.text)
        yield reply
