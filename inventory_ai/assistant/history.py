"""Stored conversation -> model messages: each stored round expands back into the messages it was,
and what is sent is cut to a token budget.

An assistant message is stored as its final text plus its tool rounds. For the model each round
becomes the assistant message that asked for the calls (its text and `tool_calls` exactly as the
model sent them) followed by one `tool` message per call, in call order; the final text follows.
A call nobody has decided yet (an earlier answer's booking waiting for a manager's sign-off, while
the conversation goes on) still gets its `tool` message, saying it waits and nothing is booked: a
`tool_calls` message without one for each call is an invalid request to DashScope.

Whose history: an answer sees the turns before it, never those after it. A later question, asked
while an earlier booking waited for its sign-off, sees that answer as it stands (waiting, or decided
by then); the earlier answer, resumed by the sign-off, continues from its own question and rounds,
not from what was asked after it: its reply is about its own booking, at its own place.

The budget (Config.history_token_budget, counted with the Qwen tokenizer, tokens.py):
  - the current turn (the question and this answer's rounds so far) is always sent whole;
  - earlier turns are kept whole, newest first, while they fit: a turn is never split, so an
    assistant message with `tool_calls` always travels with its `tool` messages;
  - the turns before those become one short message: each question and the first line of its
    answer, taken from the stored turns. Not a model's summary: that would be another call (time,
    tokens, a failure of its own) at the moment the conversation is longest, and it could say
    things that were never said.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from inventory_ai.assistant import tokens
from inventory_ai.assistant.types import Message, ToolCall
from inventory_ai.config import HISTORY_TOKEN_BUDGET
from inventory_ai.models import CallStatus, ChatMessage, MessageStatus, ToolRound

# What the chat template adds around a message, a call and a result, in tokens (counted once with
# the Qwen tokenizer: "<|im_start|>user\n…<|im_end|>\n" is 5; '<tool_call>\n{"name": …,
# "arguments": …}\n</tool_call>' 16; "<tool_response>\n…\n</tool_response>" 8).
MESSAGE_TOKENS = 5
CALL_TOKENS = 16
RESULT_TOKENS = 8
# The summary of older turns takes at most a tenth of the budget, and never more than this.
SUMMARY_MAX_TOKENS = 800
QUESTION_CHARS = 100
ANSWER_CHARS = 120
UNFINISHED = "[This answer ended {status} before it was finished; the tool results above are what was done.]"
# A call still waiting for a person, as the tool message that pairs with it.
UNDECIDED = {
    CallStatus.PENDING_CONFIRMATION: "waiting for the user's confirmation: not booked yet",
    CallStatus.AWAITING_SIGNOFF: "approved by the user, waiting for a manager's sign-off: not booked yet",
}
WAITING = "[This answer waits: {status}. The calls above without a result have not been carried out.]"

# Token counts of finished turns, for this process (a stored turn never changes once answered).
_counted = tokens.Counts()


# A refused call's arguments are replayed up to this size: the model sees what it sent to correct it,
# but twenty refused calls of 20,000 characters must not make every later request 400 KB.
REFUSED_ARGUMENT_CHARS = 2_000


def round_messages(stored: ToolRound) -> list[Message]:
    """On the wire a call carries the id the model gave it (model_call_id), so the model recognises
    its own calls; arguments it sent that are not a JSON object (refused when they came) go back
    as {} so one malformed call cannot make every later request invalid, and so do a refused
    call's arguments past REFUSED_ARGUMENT_CHARS (its error says what was wrong)."""
    calls = tuple(
        ToolCall(
            c.model_call_id,
            c.name,
            "{}"
            if c.status == CallStatus.ERROR and len(c.arguments) > REFUSED_ARGUMENT_CHARS
            else _wire_arguments(c.arguments),
        )
        for c in stored.calls
    )
    out = [Message("assistant", stored.assistant_response or "", tool_calls=calls)]
    for call in stored.calls:
        content = call.content or ""
        if call.status in UNDECIDED:
            content = json.dumps({"status": call.status, "message": UNDECIDED[call.status]})
        out.append(Message("tool", content, tool_call_id=call.model_call_id, name=call.name))
    return out


def _wire_arguments(raw: str) -> str:
    if raw.startswith("{") and raw.endswith("}"):
        try:
            if isinstance(json.loads(raw), dict):
                return raw
        except (ValueError, RecursionError):
            pass
    return "{}"


@dataclass
class Turn:
    """A question and its answer, as stored (either may be missing)."""

    question: ChatMessage | None = None
    answer: ChatMessage | None = None

    @property
    def key(self) -> tuple:
        """Identifies what the turn says: ids are unique, and an earlier answer changes only when a
        decision claims it (a sign-off resuming it), which moves its status and its heartbeat."""
        q, a = self.question, self.answer
        return (
            q.id if q else None,
            a.id if a else None,
            a.status if a else None,
            a.heartbeat_at if a else None,
        )

    def messages(self) -> list[Message]:
        q = self.question
        out = [Message("user", q.content, flagged=bool(q.flagged))] if q is not None else []
        answer = self.answer
        if answer is None:
            return out
        # What its calls did is history however the answer ended: a booking made before a failure
        # or a stop must not be proposed again as if it never happened.
        for r in answer.rounds:
            out += round_messages(r)
        if answer.status in (MessageStatus.COMPLETED, MessageStatus.AWAITING_SIGNOFF):
            if answer.content:  # what it said (one waiting for a sign-off said that it waits)
                out.append(Message("assistant", answer.content))
        elif answer.status in (MessageStatus.AWAITING_CONFIRMATION, MessageStatus.RUNNING):
            out.append(Message("assistant", WAITING.format(status=answer.status)))
        elif answer.rounds:  # its words are not replayed as if they were said; that it stopped is
            out.append(Message("assistant", UNFINISHED.format(status=answer.status)))
        return out

    def summary_line(self) -> str:
        question = _clip(self.question.content if self.question else "", QUESTION_CHARS)
        answer = self.answer
        if answer is None or answer.status != MessageStatus.COMPLETED:
            done = [c.description or c.name for r in (answer.rounds if answer else []) for c in r.calls
                    if c.status == CallStatus.SUCCESS]  # fmt: skip
            ended = (
                "ended"
                if answer is None or answer.status in (MessageStatus.FAILED, MessageStatus.CANCELLED)
                else "is"
            )
            said = (
                f"({ended} {answer.status if answer else 'unanswered'}"
                + (f"; done: {'; '.join(done)}" if done else "")
                + ")"
            )
            said = _clip(said, ANSWER_CHARS)
        else:
            lines = [line.strip() for line in (answer.content or "").splitlines() if line.strip()]
            said = _clip(lines[0], ANSWER_CHARS) if lines else "(no text)"
        return f"- Q: {question or '(none)'} → A: {said}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def size(messages: list[Message], count: Callable[[str], int] = tokens.count) -> int:
    """Tokens of these messages as the model reads them (`count` per text, plus the template's)."""
    total = 0
    for m in messages:
        total += MESSAGE_TOKENS + count(m.content) + (RESULT_TOKENS if m.role == "tool" else 0)
        for call in m.tool_calls:
            total += CALL_TOKENS + count(call.name) + count(call.arguments)
    return total


def turns_of(messages: list[ChatMessage]) -> list[Turn]:
    """Stored messages (in order) as turns: each question starts one, its answer joins it."""
    turns: list[Turn] = []
    for m in messages:
        if m.role == "user":
            turns.append(Turn(question=m))
        elif turns and turns[-1].answer is None:
            turns[-1].answer = m
        else:
            turns.append(Turn(answer=m))
    return turns


def expand(
    messages: list[ChatMessage], current: ChatMessage, budget: int = HISTORY_TOKEN_BUDGET
) -> list[Message]:
    """Messages for the model: [a summary of older turns], the earlier turns that fit the budget,
    then the current turn whole (its question and this answer's rounds so far)."""
    before = current.created_seq
    turns = turns_of([m for m in messages if m.created_seq < before])
    now: list[Message] = []
    if turns and turns[-1].answer is None:  # the question this answer answers
        now += turns.pop().messages()
    for r in current.rounds:
        now += round_messages(r)
    wire: dict[int, list[Message]] = {}

    def turn_messages(i: int) -> list[Message]:
        if i not in wire:
            wire[i] = turns[i].messages()
        return wire[i]

    def flat(start: int) -> list[Message]:
        return [m for i in range(start, len(turns)) for m in turn_messages(i)]

    # Most conversations fit by their bytes (each token is at least one byte): no tokenizer needed.
    room, start = budget - size(now, tokens.bound), len(turns)
    while start > 0 and (cost := size(turn_messages(start - 1), tokens.bound)) <= room:
        room, start = room - cost, start - 1
    if start == 0:
        return flat(0) + now

    # Counted: the newest turns that fit; if some do not, room is kept for the summary of those.
    room, start, costs = budget - size(now), len(turns), []
    while start > 0:
        cost = _counted.get(turns[start - 1].key, lambda i=start - 1: size(turn_messages(i)))
        if cost > room:
            break
        room, start = room - cost, start - 1
        costs.append(cost)
    if start == 0:
        return flat(0) + now
    summary_room = min(SUMMARY_MAX_TOKENS, budget // 10)
    while costs and room < summary_room:  # give up the oldest kept turns until the summary fits
        room += costs.pop()
        start += 1
    return [summary(turns[:start], summary_room)] + flat(start) + now


def summary(older: list[Turn], room: int) -> Message:
    """One message: the older turns' questions and their answers' first lines, newest kept when
    they do not all fit in `room` tokens. A user message (it quotes what the user typed, so it must
    not carry a system message's authority), framed so that it is not read as a new request."""
    lines: list[str] = []
    left = room - MESSAGE_TOKENS - 40  # the heading below
    for turn in reversed(older):
        line = turn.summary_line()
        cost = _counted.get(("summary", *turn.key), lambda line=line: tokens.count(line) + 1)
        if cost > left:
            break
        lines.append(line)
        left -= cost
    if not lines:
        shown = "too long to list here"
    elif len(lines) < len(older):
        shown = f"the last {len(lines)} of them below, oldest first"
    else:
        shown = "below, oldest first"
    heading = (
        f"[Earlier in this conversation, summarised: {len(older)} older turns, {shown}. Not a new request.]"
    )
    return Message("user", "\n".join([heading, *reversed(lines)]))
