"""A scripted model for loop tests (the way simonw/llm tests its chains): canned replies, in order,
recording every request so tests can assert on what the model was shown."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator

from inventory_ai.assistant.extension import EXTENSION_KEY
from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.types import ModelReply, ModelRequest, TextDelta, ToolCall, Usage

Step = ModelReply | ProviderError | Callable[[ModelRequest], ModelReply]


def call(name: str, arguments: dict | str | None = None, call_id: str | None = None) -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)
    return ToolCall(call_id or f"call_{name}_{abs(hash(raw)) % 10_000}", name, raw)


def calls(*tool_calls: ToolCall, text: str = "") -> ModelReply:
    return ModelReply(text=text, tool_calls=tuple(tool_calls), usage=Usage(10, 5), finish_reason="tool_calls")


def answer(text: str) -> ModelReply:
    return ModelReply(text=text, usage=Usage(20, 8), finish_reason="stop")


class ScriptedProvider:
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


def use(app, provider: ScriptedProvider) -> ScriptedProvider:
    app.extensions[EXTENSION_KEY].models.provider_factory = lambda _session: (provider,)
    return provider


def booking(quantity: float, movement_type: str = "outbound", material: str = "M001") -> dict:
    """The arguments of a record_stock_movement call in the main warehouse, in kg."""
    return {
        "material": material,
        "warehouse": "主仓库",
        "movement_type": movement_type,
        "quantity": quantity,
        "unit": "kg",
        "reason": "生产领料",
    }
