"""The embedded offline provider: a useful assistant with no network and no API key. It goes through
the same loop as Qwen: on the user's message a plan (understanding.py), a real tool call or a reply
without one; on results the next call (a report's formatter, a search for a detail that matched
several), then the answer written from the results (answers.py). Never a tool it was not offered,
never a figure no tool returned.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator

from inventory_ai.assistant.providers.offline.answers import compose_answer
from inventory_ai.assistant.providers.offline.asks import WRITES
from inventory_ai.assistant.providers.offline.reading import Context, Plan
from inventory_ai.assistant.providers.offline.replies import said
from inventory_ai.assistant.providers.offline.understanding import plan
from inventory_ai.assistant.types import Message, ModelReply, ModelRequest, ProviderChunk, TextDelta, ToolCall


class OfflineProvider:
    name = "offline"
    model = "offline"
    costs_tokens = False

    def __init__(self, lexicon: Context | Callable[[], Context]):
        # What it knows of the warehouse for this message (extension.offline_lexicon), built when
        # first asked: as a fallback it is rarely asked (milliseconds every message otherwise).
        self._lexicon = lexicon
        self._plans: dict[tuple, Plan] = {}

    def _plan(self, text: str, context, earlier: tuple[str, ...] = ()) -> Plan:
        """The plan for this message, decided once: each step of the answer (the first call, the
        next after its results, the words at the end) asks again, and the answer is the same."""
        key = (text, frozenset(context.offered), context.role, context.warehouses, context.language, earlier)
        key += (context.flagged, context.booked_before)
        if key not in self._plans:
            self._plans[key] = plan(text, context, earlier)
        return self._plans[key]

    @property
    def lexicon(self) -> Context:
        if callable(self._lexicon):
            self._lexicon = self._lexicon()
        return self._lexicon

    def stream(self, request: ModelRequest) -> Iterator[ProviderChunk]:
        reply = self.reply(request)
        if reply.text:
            for piece in re.findall(r".{1,24}", reply.text, flags=re.S):
                yield TextDelta(piece)
        yield reply

    def reply(self, request: ModelRequest) -> ModelReply:
        messages = list(request.messages)
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        text = messages[last_user].content
        # The conversation's recent questions, for a follow-up that leans on them ("那低筋面粉呢？").
        # A turn intake flagged is never leaned on (its order would come back through "那X呢？"), and
        # a flagged message is no follow-up of anything.
        turns = [m.content for m in messages[:last_user] if m.role == "user" and m.content and not m.flagged]
        earlier = () if request.flagged else tuple(turns[-3:])
        results = _results(messages[last_user + 1 :])
        context = self.lexicon
        context.offered = {t.name for t in request.tools}
        context.role = request.role or context.role
        context.warehouses = request.warehouses
        context.language = request.language  # the user's chosen language, else their message's
        context.flagged = text if request.flagged else None  # screened once, at intake
        # The turn before booked something, or proposed it and it waits: a correction never books it twice.
        asked = [i for i, m in enumerate(messages[:last_user]) if m.role == "user"]
        previous = _results(messages[asked[-1] + 1 : last_user]) if asked else []
        context.booked_before = any(r["name"] == "record_stock_movement" and not r["error"] for r in previous)
        if request.tools:
            follow = self._next_call(text, results, context, earlier)
            if follow:  # two writes asked at once are proposed together (each waits for its decision)
                return ModelReply(tool_calls=follow, finish_reason="tool_calls")
        if not results:
            reply = self._plan(text, context, earlier).reply if request.tools else None
            return ModelReply(
                text=reply or said(request.language == "zh", "nothing_to_say"), finish_reason="stop"
            )
        names = context.linker.english_names()
        answer = compose_answer(request.language, text, results, lambda zh: names.get(zh, zh))
        if request.tools and (note := self._plan(text, context, earlier).note):
            answer = f"{answer}\n{note}"  # the part of the message that was refused, said so
        return ModelReply(text=answer, finish_reason="stop")

    def _next_call(self, text: str, results: list[dict], context: Context, earlier) -> tuple[ToolCall, ...]:
        decided = self._plan(text, context, earlier)
        if not results:
            # A write said first is proposed with the read said after it (the read runs meanwhile).
            after = decided.after
            both = after is not None and decided.tool in WRITES and after.tool in context.offered
            calls = (_call(p.tool, p.arguments) for p in (decided, after) if p and (p is decided or both))
            return tuple(calls) if decided.tool else ()
        called = {r["name"] for r in results}
        last = results[-1]
        # A detail lookup that matched several materials: show them instead.
        error = last["error"] or {}
        several = last["name"] == "get_material_detail" and "matches" in (error.get("message") or "")
        if several and "search_materials" in context.offered and "search_materials" not in called:
            return (_call("search_materials", {"keyword": last["arguments"].get("material", "")}),)
        if decided.then and decided.then not in called and not last["error"]:
            rows = _rows_of(last["data"])
            if rows:
                return (_call(decided.then, {"title": text.strip()[:100], "rows": rows[:50]}),)
        second, asked = decided.after, [(r["name"], r["arguments"]) for r in results]
        if second and second.tool in context.offered and (second.tool, second.arguments) not in asked:
            return (_call(second.tool, second.arguments),)  # the message's second ask, after the first
        return ()


def _call(name: str, arguments: dict) -> ToolCall:
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(arguments, ensure_ascii=False))


def _results(turn: list[Message]) -> list[dict]:
    """This turn's tool results with their calls: [{name, arguments, data, error}] in order."""
    calls = {c.id: c for m in turn if m.role == "assistant" for c in m.tool_calls}
    out = []
    for m in (m for m in turn if m.role == "tool"):
        call = calls.get(m.tool_call_id or "")
        data = _json(m.content, {"error": {"type": "Unreadable", "message": (m.content or "")[:200]}})
        error = data.get("error") if isinstance(data, dict) else None
        arguments = _json(call.arguments or "{}", {}) if call is not None else {}
        name = m.name or (call.name if call else "")
        out.append({"name": name, "arguments": arguments, "data": data, "error": error})
    return out


def _json(text: str | None, otherwise):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return otherwise


def _rows_of(data) -> list[dict]:
    if not isinstance(data, dict):
        return []
    for key in ("items", "materials", "movements", "by_category", "by_warehouse"):
        rows = data.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            return [{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in rows]
    return []
