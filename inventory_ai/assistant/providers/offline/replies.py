"""The assistant's own words when no tool fits: a question, a refusal, a polite answer, the reason a
role cannot do something and who can. In the user's language; the sentences are data
(offline_words.json "answers"), as are the answers written from tool results (answers.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inventory_ai.assistant.providers.offline import words

if TYPE_CHECKING:
    from inventory_ai.assistant.providers.offline.linking import Mention
    from inventory_ai.assistant.providers.offline.reading import Context, Reading


def said(zh: bool, key: str, **values) -> str:
    """A sentence of offline_words.json "answers" with the figures and names given."""
    return words.ANSWERS[key]["zh" if zh else "en"].format(**values)


def ask(zh: bool, question_zh: str, question_en: str) -> str:
    return question_zh if zh else question_en


def _role(zh: bool, role: str | None) -> str:
    return words.ANSWERS["roles"]["zh" if zh else "en"].get(role or "", role or "")


def _listed(zh: bool, items) -> str:
    return ("、" if zh else ", ").join(items)


def which_material(r: Reading, mention: Mention) -> str:
    options = _listed(
        r.zh, (f"{c.name_zh if r.zh else c.name_en} ({c.code})" for c in mention.candidates[:4])
    )
    total = f"{mention.total}{'+' if mention.more else ''}"  # counted only so far in a large catalogue
    return said(r.zh, "which_material", said=mention.text, total=total, options=options)


def which_one(r: Reading, ctx: Context) -> str:
    labels = [lbl for lbl, _p in r.guess.ranked if lbl in ctx.intents and ctx.intents[lbl][0] in ctx.offered]
    names = [ctx.tool_labels.get(ctx.intents[lbl][0], (lbl, lbl))[0 if r.zh else 1] for lbl in labels[:3]]
    names = list(dict.fromkeys(names)) or words.ANSWERS["which_one_default"]["zh" if r.zh else "en"]
    return said(r.zh, "which_one", options=("，还是" if r.zh else ", or ").join(names))


def role_refusal(zh: bool, tool: str, ctx: Context) -> str:
    others = _listed(zh, (_role(zh, r) for r in ctx.who_can.get(tool, []))) or _role(zh, "admin")
    label = ctx.tool_labels.get(tool, (tool, tool))[0 if zh else 1]
    mine = _role(zh, ctx.role)
    return said(zh, "role_refusal", mine=mine, tool=label if zh else label.lower(), others=others)


def movement_refusal(zh: bool, kind: str, ctx: Context) -> str:
    can = _listed(zh, (_role(zh, role) for role, kinds in ctx.movements_by_role.items() if kind in kinds))
    kinds = words.ANSWERS["movement_kinds"]["zh" if zh else "en"]
    return said(zh, "movement_refusal", mine=_role(zh, ctx.role), kind=kinds[kind], others=can)


def no_such_warehouse(zh: bool, said_: str, warehouses: list[tuple[str, str, str]]) -> str:
    """`warehouses`: (code, Chinese name, English name) of each warehouse there is."""
    names = _listed(zh, (f"{zh_name if zh else en} ({code})" for code, zh_name, en in warehouses))
    return said(zh, "no_such_warehouse", said=said_, names=names)
