"""What the loop needs from a model: one streaming call, and errors it can tell apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from inventory_ai.assistant.types import ModelRequest, ProviderChunk


class ProviderError(Exception):
    """The model could not answer. `code` is safe to show; the message never carries a secret."""

    code = "model_error"

    def __init__(self, message: str, code: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.retry_after = retry_after


class ModelUnavailable(ProviderError):
    """The circuit breaker is open (or the service keeps failing): try again after `retry_after` s."""

    code = "model_unavailable"


class ChatProvider(Protocol):
    name: str
    model: str

    def stream(self, request: ModelRequest) -> Iterator[ProviderChunk]:
        """Yield TextDelta / ReasoningDelta as they arrive, then exactly one ModelReply."""
        ...
