"""Asking the model, for the loop (manager.py): who may answer, and one streamed call.

Who may answer is a chain (extension.provider_factory): the configured model, then the fallbacks of
INVENTORY_AI_LLM_FALLBACK, each tried when the one before failed after its retries or its breaker is
open. Past the user's daily token budget only those that cost no tokens are left; with none left,
the answer fails with a 429 until the plant's midnight. Every call leaves a usage row (ModelUsage,
stored as a ModelCall), which the loop writes with its next step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass

from sqlalchemy.orm import Session

from inventory_ai.assistant import answer_spans
from inventory_ai.assistant import events as ev
from inventory_ai.assistant.providers.base import (
    AnswerTooSlow,
    ChatProvider,
    ProviderError,
    TokenBudgetExhausted,
)
from inventory_ai.assistant.types import ModelReply, ModelRequest, ReasoningDelta, TextDelta, ToolCall
from inventory_ai.logging import get_logger
from inventory_ai.observability import MODEL_CALLS, MODEL_SECONDS, MODEL_TOKENS, labelled
from inventory_ai.services import usage
from inventory_ai.text import storable

log = get_logger(__name__)


@dataclass
class ModelUsage:
    """One model call's usage, a plain row until the loop's next write stores it (answer_store.usage):
    an ORM object here would cost the unit of work's bookkeeping for nothing."""

    message_id: str
    user_id: int
    provider: str
    model: str
    status: str | None = None
    error_code: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0


@dataclass(frozen=True)
class Answered:
    """What one ask returns: the reply (None when the user cancelled meanwhile) and who wrote it."""

    reply: ModelReply | None
    model: str | None


class ModelChain:
    def __init__(
        self,
        provider_factory: Callable[[Session], tuple[ChatProvider, ...]],
        daily_token_budget: int | None = None,
    ):
        self.provider_factory = provider_factory
        self.daily_token_budget = daily_token_budget

    def providers(self, session: Session, user_id: int) -> tuple[ChatProvider, ...]:
        """Who may answer this user now, in order."""
        providers = self.provider_factory(session)
        if not self.daily_token_budget or not any(p.costs_tokens for p in providers):
            return providers
        if usage.tokens_today(session, user_id) >= self.daily_token_budget:
            providers = tuple(p for p in providers if not p.costs_tokens)
            if not providers:
                raise TokenBudgetExhausted(
                    "the daily token budget is used up", retry_after=usage.seconds_to_midnight()
                )
        return providers

    def ask(
        self,
        providers: tuple[ChatProvider, ...],
        request: ModelRequest,
        usage_rows: list[ModelUsage],
        cancelled: Callable[[], bool],
        message_id: str,
        user_id: int,
        deadline: float | None = None,
    ) -> Generator[ev.Event, None, Answered]:
        """The first provider that answers; a failed one hands over to the next. The last one's
        error is raised when none answers, and at once when the answer's deadline (time.monotonic)
        passes: a model that keeps talking past it is cut off."""
        for index, provider in enumerate(providers):
            answer_spans.answered_by(provider.name, provider.model)
            try:
                reply = yield from answer_spans.model_call(
                    provider.name,
                    provider.model,
                    request,
                    self._ask_one(provider, request, usage_rows, cancelled, message_id, user_id, deadline),
                )
                return Answered(reply, provider.model)
            except ProviderError as exc:
                if index == len(providers) - 1 or isinstance(exc, AnswerTooSlow):
                    raise
                log.warning(
                    "model_fallback", failed=provider.model, code=exc.code, next=providers[index + 1].model
                )
        raise ProviderError("no model is configured", code="no_model")

    def _ask_one(
        self,
        provider: ChatProvider,
        request: ModelRequest,
        usage_rows: list[ModelUsage],
        cancelled: Callable[[], bool],
        message_id: str,
        user_id: int,
        deadline: float | None = None,
    ) -> Generator[ev.Event, None, ModelReply | None]:
        """One model call, streamed; the ModelReply with its text made storable, or None when the
        user cancelled meanwhile. Its usage row joins `usage_rows` either way."""
        started = time.monotonic()
        record = ModelUsage(
            message_id=message_id, user_id=user_id, provider=provider.name, model=provider.model
        )
        reply = None
        try:
            for chunk in provider.stream(request):
                if isinstance(chunk, TextDelta):
                    yield ev.Delta(storable(chunk.text))
                elif isinstance(chunk, ReasoningDelta):
                    yield ev.Reasoning(storable(chunk.text))
                elif isinstance(chunk, ModelReply):
                    reply = chunk
                if cancelled():
                    record.status = "cancelled"
                    return None
                if deadline is not None and time.monotonic() > deadline:
                    raise AnswerTooSlow("the answer's deadline passed while the model was talking")
            if reply is None:
                raise ProviderError("the model stream ended without an answer", code="incomplete_stream")
            record.status = "success"
            record.input_tokens, record.output_tokens = reply.usage.input_tokens, reply.usage.output_tokens
            labelled(MODEL_TOKENS, provider.model, "input").inc(record.input_tokens or 0)
            labelled(MODEL_TOKENS, provider.model, "output").inc(record.output_tokens or 0)
            # A copy with its text and calls made storable, every other field as it came (the
            # frozen dataclass's fields from its dict: dataclasses.replace costs more, twice a message).
            return type(reply)(**vars(reply) | {
                "text": storable(reply.text) or "",
                "tool_calls": tuple(
                    ToolCall(storable(c.id) or "", storable(c.name) or "", storable(c.arguments) or "")
                    for c in reply.tool_calls
                ),
            })  # fmt: skip
        except ProviderError as exc:
            record.status, record.error_code = "error", exc.code
            raise
        finally:
            record.status = record.status or "error"
            record.duration_ms = int((time.monotonic() - started) * 1000)
            labelled(MODEL_CALLS, provider.name, record.status).inc()
            labelled(MODEL_SECONDS, provider.name).observe(record.duration_ms / 1000)
            usage_rows.append(record)
