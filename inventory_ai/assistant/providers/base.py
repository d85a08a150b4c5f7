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


class TokenBudgetExhausted(ProviderError):
    """The user's daily token budget is used up and nothing that costs no tokens may answer."""

    code = "token_budget_exhausted"


class AnswerTooSlow(ProviderError):
    """The answer's deadline passed while the model was still talking: no fallback is asked."""

    code = "deadline"


class ModelUnavailable(ProviderError):
    """The circuit breaker is open (or the service keeps failing): try again after `retry_after` s."""

    code = "model_unavailable"


class ChatProvider(Protocol):
    name: str
    model: str
    costs_tokens: bool  # counted against the daily token budget (INVENTORY_AI_DAILY_TOKEN_BUDGET)

    def stream(self, request: ModelRequest) -> Iterator[ProviderChunk]:
        """Yield TextDelta / ReasoningDelta as they arrive, then exactly one ModelReply."""
        ...
