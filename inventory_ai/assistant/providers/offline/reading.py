"""Reading a request: its quantities, periods and dates (slots.py), what it names (linking.py), and
how it asks, judged on the text with those masked out (classifier.py). Deciding what to do with a
reading is understanding.py's job; the words of a reply without a tool are replies.py's."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.classifier import PLACEHOLDERS, Guess
from inventory_ai.assistant.providers.offline.linking import Linker, Links
from inventory_ai.text import language_of


@dataclass
class Context:
    """What the provider knows for this message (setup.offline_lexicon builds it)."""

    linker: Linker
    guess: Callable[[str], Guess]
    offered: set[str]
    role: str | None
    today: date
    intents: dict[str, tuple[str, dict]]  # intent label -> (tool, default arguments)
    who_can: dict[str, list[str]]  # tool -> roles that may use it
    movements_by_role: dict[str, frozenset[str]]
    home_warehouse: Callable[[str], str | None]
    tool_labels: dict[str, tuple[str, str]]
    language: str | None = None  # what the answer is written in; None: the request's own


@dataclass
class Reading:
    text: str
    slots: slot.Slots
    links: Links
    masked: str
    guess: Guess
    zh: bool


def read(text: str, ctx: Context) -> Reading:
    slots = slot.parse(text, ctx.today)
    places = ctx.linker.find_places(slot.blank(text, slots.spans))
    code_spans = [(m.group(0).upper(), m.span()) for m in slot.CODE.finditer(text)]
    rest = slot.blank(text, slots.spans + [p.span for p in places])
    materials = ctx.linker.find_materials(rest, code_spans)
    links = Links(materials, places)
    marks: list[tuple[tuple[int, int], str]] = [(m.span, PLACEHOLDERS["m"]) for m in materials]
    marks += [
        (p.span, PLACEHOLDERS[{"warehouse": "w", "category": "c", "supplier": "s"}[p.kind]]) for p in places
    ]
    marks += [(q.span, PLACEHOLDERS["q"]) for q in slots.quantities]
    marks += [(span, "") for q in slots.quantities for span in q.more_spans]
    if slots.period:
        marks.append((slots.period.span, PLACEHOLDERS["t"]))
    masked = _mask(text, marks)
    if slots.due:
        masked = re.sub(r"20\d\d[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}月\d{1,2}[日号]", PLACEHOLDERS["d"], masked)
    # What is between hello and thanks, when that is a request of its own ("hi there" stays small talk).
    asked = re.sub(words.POLITE, " ", masked, flags=re.I).strip()
    if len(re.findall(f"{words.WORD}|[{''.join(PLACEHOLDERS.values())}]", asked.lower())) < 3:
        asked = masked
    return Reading(text, slots, links, masked, ctx.guess(asked), (ctx.language or language_of(text)) == "zh")


def _mask(text: str, marks) -> str:
    out, last = [], 0
    for (start, end), mark in sorted(marks):
        if start < last:
            continue
        out.append(text[last:start])
        out.append(mark)
        last = end
    out.append(text[last:])
    return "".join(out)
