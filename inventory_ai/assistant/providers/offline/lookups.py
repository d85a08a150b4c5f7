"""The tools that read the stock, decided from a reading: a search or one material's detail, the
figures and the low-stock list. understanding.py picks the tool; these fill in its arguments (or
say why not)."""

from __future__ import annotations

import os
import re

from inventory_ai.assistant.providers.offline import replies, words
from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline.classifier import PLACEHOLDERS
from inventory_ai.assistant.providers.offline.linking import Mention
from inventory_ai.assistant.providers.offline.reading import Context, Plan, Reading, place, primary


def lookup(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    warehouse, category, supplier = place(r, "warehouse"), place(r, "category"), r.links.of("supplier")
    asked_for_a_list = re.search(words.SEARCH, r.text, re.I)
    # 那个闻起来有氨味的膨松剂: one of the kind named, described
    mention = primary(r.links) or (None if asked_for_a_list else _described_of_kind(category, r, ctx))
    if "search_materials" in ctx.offered and (kind := _a_kind(r, ctx, asked_for_a_list)):
        return kind
    if asked_for_a_list and len(r.links.materials) > 1:
        # "奶油相关的都有哪些？淡奶油、奶油奶酪这些": the list asked for is of the first, loosest word,
        # unless the word to search for is said right after the asking ("…帮我搜一下泡打粉").
        mention = _searched_for(r) or min(r.links.materials, key=lambda m: (m.named, m.span[0]))
    # One material named: its detail (of its own kind: 包装里放的吸氧小包), unless searched for by a part
    own_kind = mention is not None and mention.exact and category in (None, mention.best.category)
    listed = asked_for_a_list and mention is not None and (not mention.named or len(r.links.materials) > 1)
    if own_kind and "get_material_detail" in ctx.offered and not listed:
        return Plan("get_material_detail", {"material": mention.best.code})
    if mention is None and r.slots.codes and "get_material_detail" in ctx.offered:
        # A code no material has: the detail says so plainly, rather than a vague question.
        return Plan("get_material_detail", {"material": r.slots.codes[0]})
    if "search_materials" not in ctx.offered:
        return Plan(reply=replies.role_refusal(r.zh, "search_materials", ctx))
    if mention is not None:
        args["keyword"] = mention.text if mention.exact else ctx.linker.catalogue.kind_search(mention.text)
    elif category:
        args["keyword"] = r.links.of("category")[0].name_zh
    elif supplier:
        args["keyword"] = supplier[0].name_zh
    elif warehouse and "get_inventory_stats" in ctx.offered:  # what a warehouse holds: its figures
        return Plan("get_inventory_stats", {"warehouse": warehouse})
    elif (asked_for_a_list or re.search(words.ANY, r.text, re.I)) and (term := _asked_term(r)):
        args["keyword"] = term  # a kind the catalogue has no name for: search says what matches
    else:
        return Plan(reply=replies.which_one(r, ctx))
    on_hand = bool(re.search(words.ON_HAND, r.text, re.I))
    given = {"category": category, "warehouse": warehouse, "limit": r.slots.limit, "in_stock": on_hand}
    args.update({key: value for key, value in given.items() if value})  # only what the request says
    return Plan("search_materials", args)


def _a_kind(r: Reading, ctx: Context, asked_for_a_list) -> Plan | None:
    """A search for a kind: the request names it with examples, marks it, or asks for all a name covers."""
    warehouse, category, mention = place(r, "warehouse"), place(r, "category"), primary(r.links)
    if kind := _kind_with_examples(r):
        # "冷库里有哪些蛋液 全蛋液冷冻蛋液那种": the kind, where it was asked about
        return Plan("search_materials", {"keyword": kind, **({"warehouse": warehouse} if warehouse else {})})
    every_kind = asked_for_a_list or re.search(words.EVERY_KIND, r.text, re.I)
    examples = len(r.links.materials) >= 2 and not any(m.named for m in r.links.materials)
    if category and examples and every_kind:
        # "all the flours we carry - bread, cake, plain, the lot": the kind, its examples only say so
        return Plan("search_materials", {"category": category})
    if marked := _marked_term(r):
        return Plan("search_materials", {"keyword": marked})  # "anything called 'salt'", "almond-based"
    named_alone = mention is not None and mention.named and len(r.links.materials) == 1
    every = named_alone and re.search(words.EVERY_KIND, r.text, re.I)  # "泡打粉 两种都还有吗": all it covers
    if every and ctx.linker.catalogue.search(mention.text).total > 1:
        return Plan("search_materials", {"keyword": mention.text})
    return None


def _described_of_kind(category: str | None, r: Reading, ctx: Context) -> Mention | None:
    """The one material of a named kind that the rest of the request describes, clearly."""
    said = slot.blank(r.text, r.slots.spans + [p.span for p in r.links.places])
    code = ctx.linker.catalogue.described_clearly(said) if category else None
    card = ctx.linker.catalogue.material(code) if code else None
    kind = r.links.of("category")[0].span if card else (0, 0)
    return Mention(said.strip(), kind, [card], True, 1) if card and card.category == category else None


def _searched_for(r: Reading) -> Mention | None:
    """The material word said right after "search"/搜 ("帮我搜一下泡打粉", "can you search starch?")."""
    for asked in re.finditer(words.SEARCH, r.text, re.I):
        for m in r.links.materials:
            between = r.text[asked.end() : m.span[0]]
            if m.span[0] >= asked.end() and re.fullmatch(rf"\s*(?:{words.AFTER_SEARCH})?\s*", between, re.I):
                return m
    return None


def _marked_term(r: Reading) -> str | None:
    """A word the request marks as the thing to search for: quoted or "called" ("anything called
    'salt'", 叫“奶酪”的), or said as what things are based on ("almond-based", 椰子相关的)."""
    for m in r.links.materials:
        end = m.span[1] - 1 if r.text[m.span[1] - 1] == "'" else m.span[1]  # a word's end takes the quote
        before, after = r.text[: m.span[0]], r.text[end:]
        if m.named and not re.search(rf"(?:{words.CALLED})\s*['\"“‘「]?\s*$", before, re.I):
            continue  # "what's the unit cost of 'cream cheese'?": a full name quoted is that material
        if (
            re.search(rf"(?:{words.MARKED_BY})\s*['\"“‘「]?\s*$|['\"“‘「]$", before, re.I)
            and (re.match(r"\s*['\"”’」]", after) or re.search(rf"(?:{words.CALLED})\s*$", before, re.I))
        ) or re.match(words.BASED, after, re.I):
            return m.text.strip("'")
    based = re.search(rf"\b([a-z]{{3,}})-(?:{words.BASED_EN})\b", r.text, re.I)
    if based and any(m.named and m.span[0] <= based.start() < m.span[1] for m in r.links.materials):
        return None  # "butter-flavoured shortening" is a name
    return based.group(1) if based else None


def _kind_with_examples(r: Reading) -> str | None:
    """The kind a request names with examples of it: "都有哪些馅？红豆的莲蓉的那种", "盐有几种？食盐海盐",
    "what bags do we have, bread bags carrier bags": a loose word that covers two or more others,
    or the end the examples' names share, said on its own as well."""
    for loose in (m for m in r.links.materials if not m.exact):  # "奶粉还有几袋 全脂脱脂都要"
        others = [m for m in r.links.materials if m is not loose]
        codes = {c.code for c in loose.candidates}
        if len(others) >= 2 and all(codes & {c.code for c in m.candidates} for m in others):
            return loose.text
    names = list({m.best.code: m.best for m in r.links.materials if m.exact}.values())  # each once
    if len(names) < 2:
        return None
    zh = os.path.commonprefix([n.name_zh[::-1] for n in names])[::-1]
    en = os.path.commonprefix([n.name_en.lower().split()[::-1] for n in names])
    # The kind said apart from the examples' full names ("蓝莓酱、草莓果酱这些果酱": 酱 finds both)
    outside = slot.blank(r.text, [m.span for m in r.links.materials if m.named]).lower()
    for kind in (zh, " ".join(reversed(en))):
        if kind and kind in outside and (not kind.isascii() or re.search(rf"\b{re.escape(kind)}\b", outside)):
            return kind
    return None


def _asked_term(r: Reading) -> str | None:
    rest = re.sub("|".join(map(re.escape, PLACEHOLDERS.values())), " ", r.masked)
    rest = re.sub(words.SEARCH, " ", re.sub(words.SEARCH_FILLER, " ", rest, flags=re.I), flags=re.I)
    term = " ".join(rest.split())
    one_character = len(term) == 1 and "\u4e00" <= term <= "\u9fff"  # 各种油: 油
    return term if 2 <= len(term) <= 16 or one_character else None


def what_is_in(text: str, r: Reading, ctx: Context) -> Plan | None:
    """What a warehouse or a category holds ("包材仓都有什么", "list all the additives"): a search
    filtered by it, not its figures or its low stock."""
    warehouse, category = place(r, "warehouse"), place(r, "category")
    said_else = r.links.materials or r.slots.quantities or r.slots.period or r.slots.codes
    if not (warehouse or category) or said_else or "search_materials" not in ctx.offered:
        return None
    # "包材仓都有什么", or nothing said but a warehouse and a kind ("cold store dairy", 冷库)
    only_places = warehouse and not re.sub(r"[\sⓌⒸ.?？!！]", "", r.masked)
    if not (re.search(words.WHAT_IS_IN, text, re.I) or only_places):
        return None
    if re.search(words.RUNNING_LOW, text, re.I) or re.search(words.REPORT, text, re.I):
        return None
    where = {"warehouse": warehouse, "category": category}
    return Plan("search_materials", {kind: code for kind, code in where.items() if code})


def stats(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    mention = primary(r.links)
    if mention is None and tool == "get_inventory_stats":  # 马达加斯加进的那个香料库存: one of the kind
        mention = _described_of_kind(place(r, "category"), r, ctx)
    kind = mention is not None and re.search(words.KIND_MARK, r.text[mention.span[1] :], re.I)
    alone = mention is not None and (
        not r.links.materials or (len(r.links.materials) == 1 and not (kind or r.links.places))
    )
    # One material's level ("is the caster sugar below its reorder level?"), or its stock
    # ("做提拉米苏那个意大利奶酪库存"): its detail, not the figures
    figures = re.search(words.FIGURES, r.text, re.I)
    level = alone and tool == "list_low_stock" and mention.named
    stock = alone and tool == "get_inventory_stats" and mention.exact and not figures
    if (level or stock) and "get_material_detail" in ctx.offered:
        return Plan("get_material_detail", {"material": mention.best.code})
    category = place(r, "category") or (mention.best.category if kind else None) or _category_of(mention)
    limit = r.slots.limit if tool == "list_low_stock" else None
    given = {"warehouse": place(r, "warehouse"), "category": category, "limit": limit}
    args.update({key: value for key, value in given.items() if value})  # only what the request says
    return Plan(tool, args)


def _category_of(mention: Mention | None) -> str | None:
    """The category a loose material word stands for in figures ("how much is tied up in
    chocolate"): the one that nearly all the materials it finds belong to."""
    if mention is None or mention.named or len(mention.candidates) < 2:
        return None
    categories = [c.category for c in mention.candidates]
    top = max(set(categories), key=categories.count)
    return top if top and categories.count(top) >= 0.75 * len(categories) else None
