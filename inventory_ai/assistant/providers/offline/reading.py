"""Reading a request: its quantities, periods and dates (slots.py), what it names (linking.py), and
how it asks, judged on the text with those masked out (classifier.py). Deciding what to do with a
reading is understanding.py's job; the words of a reply without a tool are replies.py's."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date

from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.classifier import CHITCHAT, DESTRUCTIVE, PLACEHOLDERS, Guess
from inventory_ai.assistant.providers.offline.linking import Linker, Links, Mention
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
    # Where a material is booked when a request names no warehouse: of those given (the person's
    # warehouses, None for all), the one holding most of it.
    home_warehouse: Callable[[str, tuple[str, ...] | None], str | None]
    tool_labels: dict[str, tuple[str, str]]
    language: str | None = None  # what the answer is written in; None: the request's own
    warehouses: tuple[str, ...] | None = None  # the asking person's warehouses; None: every one
    flagged: str | None = None  # the message, when intake's screening flagged it (ModelRequest.flagged)
    booked_before: bool = False  # the turn before proposed a booking not declined: booked, or waiting


@dataclass
class Reading:
    text: str
    slots: slot.Slots
    links: Links
    masked: str
    guess: Guess
    zh: bool
    typed: str = ""  # as typed, before what it says it is not was blanked


def read(text: str, ctx: Context, typed: str | None = None) -> Reading:
    slots = slot.parse(text, ctx.today)
    places = ctx.linker.find_places(slot.blank(text, slots.spans))
    code_spans = [(m.group(0).upper(), m.span()) for m in slot.CODE.finditer(text)]
    if any(p.kind == "category" for p in places):
        # A category's word inside a material's full name ("quail eggs", "duck eggs") is the name.
        whole = ctx.linker.find_materials(slot.blank(text, slots.spans), code_spans)
        places = [p for p in places if not (p.kind == "category" and _inside_a_name(p.span, whole))]
    rest = slot.blank(text, slots.spans + [p.span for p in places])
    materials = ctx.linker.find_materials(rest, code_spans)
    # What else is said of a loose name, without the ask's own words ("low stock in flour": any flour).
    said = re.sub(words.RUNNING_LOW, lambda m: " " * len(m.group(0)), rest, flags=re.I)
    if len(materials) == 1 or re.search(words.DESCRIBES, said, re.I):  # what else is said: 70%, its use
        materials = [ctx.linker.narrowed(m, slot.blank(said, [m.span for m in materials])) for m in materials]
    materials = _one_name_in_two_parts(text, materials)
    if materials and (len(materials) > 1 or not all(m.named for m in materials)):
        materials = [found] if (found := described_by_clause(rest, materials, ctx.linker)) else materials
    links = Links(materials, places)
    marks: list[tuple[tuple[int, int], str]] = [(m.span, PLACEHOLDERS["m"]) for m in materials]
    marks += [(p.span, PLACEHOLDERS[p.kind[0]]) for p in places]  # Ⓦ, Ⓒ, Ⓢ: a warehouse, category, supplier
    marks += [(q.span, PLACEHOLDERS["q"]) for q in slots.quantities]
    marks += [(span, "") for q in slots.quantities for span in q.more_spans]
    marks += [(slots.period.span, PLACEHOLDERS["t"])] if slots.period else []
    masked = _mask(text, marks)
    if slots.due:
        masked = re.sub(r"20\d\d[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}月\d{1,2}[日号]", PLACEHOLDERS["d"], masked)
    # What is between hello and thanks, when that is a request of its own ("hi there" stays small talk).
    asked = re.sub(words.POLITE, " ", masked, flags=re.I).strip()
    if len(re.findall(f"{words.WORD}|[{''.join(PLACEHOLDERS.values())}]", asked.lower())) < 3:
        asked = masked
    zh = (ctx.language or language_of(text)) == "zh"
    return Reading(text, slots, links, masked, _guess(asked, ctx), zh, text if typed is None else typed)


def _guess(asked: str, ctx: Context) -> Guess:
    """How the request asks. When the whole is unclear, the clause that asks most clearly: people
    explain before they ask ("Order 2000 toast boxes please, the bakery is switching to…"). Never a
    booking on one clause's say ("I used 3 bags this morning, just checking what is left")."""
    whole = ctx.guess(asked)
    clauses = [
        c for c in re.split(r"[,，。;；!！?？]|\s-\s", asked) if len(re.findall(words.WORD, c.lower())) >= 2
    ]
    if whole.confidence >= 0.6 or len(clauses) < 2:
        return whole
    best = max((ctx.guess(c) for c in clauses), key=lambda g: g.confidence)
    clearer = best.confidence >= 0.6 and best.confidence > whole.confidence
    never = (CHITCHAT, DESTRUCTIVE, "book_in", "book_out", "transfer", "stocktake")  # on one clause's say
    return best if clearer and best.label not in never else whole


# A clause that describes what follows its 的: 做红丝绒的红色素, 给黑麦面包上深棕色的那个色素.
_CLAUSE_ENDS = re.compile(words.CLAUSE_ENDS)  # what is said before it describes
_CLAUSE = re.compile(rf"([^\s\d,，。;；:：!！?？]{{2,}}?)的(?:{words.THAT_KIND})?(?=[\u4e00-\u9fff])")


def described_by_clause(text: str, materials: list[Mention], linker: Linker) -> Mention | None:
    """The one material a clause before 的 describes, read against the descriptions: one the
    request also names (红丝绒 and 色素: the red velvet blend its description calls the red colouring),
    or, naming none, the clear match or the nearest whose name holds the word after 的
    (做提拉米苏撒面的那个粉: the cocoa, not the mascarpone)."""
    # No name said whole: what the whole describes clearly; one of the materials of a loose name said
    # outside a clause (chocolate for the brownies is no walnut; 拎蛋糕回家的那种袋子 may be no 蛋糕)
    if materials and not any(m.named for m in materials) and re.search(words.DESCRIBES, text, re.I):
        whole = linker.described(text, margin=1.25)  # a whole description says more than a clause
        heads = [m for m in materials if not m.exact and not _CLAUSE_ENDS.search(text, m.span[1])]
        found = {c.code for m in heads for c in linker.catalogue.search(m.text, limit=50).cards}
        if whole is not None and whole.exact and (not heads or whole.best.code in found):
            return whole
    named = {c.code for m in materials for c in m.candidates}
    for clause in _CLAUSE.finditer(text) if len(materials) != 1 or not materials[0].exact else ():
        if re.search(words.KINDS, clause.group(1), re.I):
            continue  # "统计一下各种面粉的…": every kind asked for, none described
        said = linker.described(clause.group(1))
        if said is None or any(m.text == clause.group(1) for m in materials):
            continue
        head, ranked = text[clause.end()], said.candidates
        fits = [head in c.name_zh for c in ranked[:2]]
        pick = ranked[0] if said.exact or (fits[0] and not any(fits[1:])) else None
        if pick is not None and (pick.code in named or not materials):
            return Mention(clause.group(1), clause.span(1), [pick], True, 1)
    return None


def _one_name_in_two_parts(text: str, materials: list[Mention]) -> list[Mention]:
    """One name said in two parts ("红丝绒那个可可粉" is 红丝绒可可粉, not 可可粉): a part that
    names one material, then, a word or two on, a name that material's name also holds."""
    out: list[Mention] = []
    for mention in materials:
        if (
            out
            and (before := out[-1]).exact
            and not before.named
            and re.fullmatch(
                rf"\s*(?:{words.BETWEEN_NAME_PARTS})?\s*", text[before.span[1] : mention.span[0]]
            )
            and before.text in before.best.name_zh
            and mention.text in before.best.name_zh
            and before.best.name_zh != mention.best.name_zh
        ):
            out[-1] = replace(before, span=(before.span[0], mention.span[1]), named=True)
            continue
        out.append(mention)
    return out


def _inside_a_name(span: tuple[int, int], mentions) -> bool:
    return any(m.named and m.span[0] <= span[0] and span[1] <= m.span[1] and m.span != span for m in mentions)


def _mask(text: str, marks) -> str:
    out, last = [], 0
    for (start, end), mark in sorted(marks):
        if start < last:
            continue
        out += [text[last:start], mark]
        last = end
    out.append(text[last:])
    return "".join(out)


@dataclass
class Plan:
    """What to do with a request: a tool call with its arguments (and, for a report, the tool that
    formats the rows afterwards), or a reply without a tool."""

    tool: str | None = None
    arguments: dict = field(default_factory=dict)
    reply: str | None = None
    then: str | None = None  # a tool to call with the first one's rows (format_report)
    after: Plan | None = None  # a second ask of the same message, called once the first is answered
    note: str | None = None  # said after the answer (what part of the message was refused)


def primary(links: Links) -> Mention | None:
    """The material a request is about: the first it names by its full name, alias or code, else
    the first it names unambiguously, else the first it names."""
    return next(
        (m for m in links.materials if m.named),
        next((m for m in links.materials if m.exact), links.materials[0] if links.materials else None),
    )


def place(r: Reading, kind: str) -> str | None:
    return found[0].code if (found := r.links.of(kind)) else None


def direction(text: str) -> str | None:
    """Which way the movement a request speaks of goes, by its words; None: both or not said."""
    if re.search(words.ARRIVED_AND_PUT, text, re.I) and not re.search(words.NAMED_ROUTE, text, re.I):
        return "inbound"
    for verbs, kind in ((words.TRANSFER, "transfer"), (words.ADJUST, "adjustment")):
        if re.search(verbs, text, re.I):
            return kind
    if re.search(words.BOTH_WAYS, text, re.I):
        return None  # both ways: every movement
    if re.search(words.RETURNED, text, re.I):
        return "inbound"
    out, inn = re.search(words.OUT, text, re.I), re.search(words.IN, text, re.I)
    if out or inn:  # both: the first said
        return "outbound" if out and (not inn or out.start() < inn.start()) else "inbound"
    return "inbound" if re.search(words.GOT_IN, text, re.I) else None
