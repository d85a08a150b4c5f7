"""Deciding what a request means, from the three parts together: what it names (linking.py), how
it asks (classifier.py) and its quantities, periods and dates (slots.py).

The decision is a Plan: a tool call with its arguments (and, for a report, the tool that formats the
rows afterwards), or a reply without a tool: a short question when the request is vague or names
several materials without a clear best one, a plain word when the user's role lacks the tool (and
who can), a polite answer with examples to small talk, a refusal to destroy data or to override the
rules. Never a tool the user lacks.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from decimal import Decimal

from inventory_ai.assistant.providers.offline import replies, words
from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline.classifier import CHITCHAT, DESTRUCTIVE, PLACEHOLDERS
from inventory_ai.assistant.providers.offline.linking import Links, Mention
from inventory_ai.assistant.providers.offline.reading import Context, Reading, read
from inventory_ai.errors import DomainError
from inventory_ai.services.screening import screen
from inventory_ai.services.units import convert

CONFIDENT = 0.30  # below this, and with nothing named, the request is asked about, not guessed
DATA_LABELS = ("lookup", "stats", "low_stock", "movements")
BOOKINGS = {"inbound": "book_in", "outbound": "book_out", "transfer": "transfer", "adjustment": "stocktake"}
_FROM = r"从|由|from|out of"
_TO = r"到|去|进|往|至|调往|→|->|to|into"


@dataclass
class Plan:
    tool: str | None = None
    arguments: dict = field(default_factory=dict)
    reply: str | None = None
    then: str | None = None  # a tool to call with the first one's rows (format_report)


def plan(text: str, ctx: Context) -> Plan:
    r = read(text, ctx)
    if screen(text).flagged or _destroys(text, r) or re.search(words.TAMPER, text, re.I):
        return Plan(reply=replies.refusal(r.zh))
    named = bool(r.links.materials or r.links.places or r.slots.codes)
    label = r.guess.label
    if r.slots.period and not named and not r.slots.quantities and label != CHITCHAT:
        # A day alone does not make a question about stock ("今天食堂中午吃啥呀"): asked without
        # its placeholder, is it small talk?
        plain = ctx.guess(text)
        if plain.label == CHITCHAT and plain.confidence >= 0.6:
            label = CHITCHAT
    # Small talk that only brushes a material's name ("写一首关于面包的诗", "annual leave") stays
    # small talk; a material named in full, a code or a place makes it about the warehouse.
    about_stock = named and (
        r.guess.confidence < 0.6
        or any(m.named for m in r.links.materials)
        or r.links.places
        or r.slots.codes
        or len(re.findall(words.WORD, r.masked.lower())) <= 6  # "hi, butter?": little else
    )
    if label == DESTRUCTIVE or (label == CHITCHAT and about_stock):  # the model's second thought
        label = next(
            lbl for lbl, _p in r.guess.ranked if lbl != DESTRUCTIVE and (lbl != CHITCHAT or not about_stock)
        )
    if re.search(words.TEACH, text, re.I):
        label = "teach"
    elif re.search(r"\bPR\b|请购|采购申请|purchase request|\breq(?:uisition)?\b", text) and r.links.materials:
        label = "purchase"  # the purchase request's own names: no other reading of them
    elif _only_names(r.masked) and named:
        label = "lookup"
    elif label == CHITCHAT and not r.slots.quantities:
        return Plan(reply=replies.small_talk(r.zh, ctx))
    elif label in (CHITCHAT, DESTRUCTIVE) or (r.guess.confidence < CONFIDENT and not named):
        return Plan(reply=replies.which_one(r, ctx))
    if label == "report" or (re.search(words.REPORT, text, re.I) and label in DATA_LABELS):
        # A report of what? Ask the model again without the report words, among the data it can gather.
        subject = ctx.guess(re.sub(words.REPORT, " ", r.masked, flags=re.I))
        data = next((lbl for lbl, _p in subject.ranked if lbl in DATA_LABELS), "stats")
        if data == "stats" and r.links.materials:  # a report of named materials: their rows
            data = "lookup"
        first = _for_label(data, r, ctx)
        if first.tool and "format_report" in ctx.offered:
            first.then = "format_report"
        return first
    booking = label in BOOKINGS.values()
    if booking and not r.slots.quantities and re.search(words.QUESTION, text, re.I):
        label = "movements"  # asked about, not told: what happened is history
    elif label in ("lookup", "stats") and r.links.materials and not r.slots.period and (act := _acted(text)):
        # A movement verb with a material ("调拨一下淡奶油"): asked about, its history; told, a
        # booking, which asks for what it lacks.
        label = "movements" if re.search(words.QUESTION, text, re.I) else BOOKINGS[act]
    elif (
        label in ("low_stock", "lookup", "stats")
        and r.slots.period
        and not r.slots.quantities
        and _direction(text)
    ):
        label = "movements"  # something that went in or out at a time: an event
    return _for_label(label, r, ctx)


def _destroys(text: str, r: Reading) -> bool:
    if r.guess.label == DESTRUCTIVE and re.search(words.DESTROY, text, re.I):
        return True
    if not re.search(words.DESTROY_VERB, text, re.I):
        return False
    records = re.search(
        r"数据库|数据|记录|流水|历史|账|database|records|history|ledger|table|data\b", text, re.I
    )
    return bool(records or (re.search(words.BULK, text, re.I) and not r.links.materials))


def _acted(text: str) -> str | None:
    """The movement a request tells to make, by its verb (出库, 调拨, stocktake…), if any."""
    for verbs, kind in ((words.ACTS_TRANSFER, "transfer"), (words.ACTS_ADJUST, "adjustment"), (words.ACTS_OUT, "outbound"),
                        (words.ACTS_IN, "inbound")):  # fmt: skip
        if re.search(verbs, text, re.I):
            return kind
    return None


def _only_names(masked: str) -> bool:
    rest = re.sub(
        r"[ⓂⓌⒸⓈ]|[\s?？!！。.,，呢吗啊呀吧了的]|还有吗|还有没有|有吗|有没有|please|pls", "", masked.lower()
    )
    return rest == ""


def primary(links: Links) -> Mention | None:
    """The material a request is about: the first it names by its full name, alias or code, else
    the first it names unambiguously, else the first it names."""
    return next(
        (m for m in links.materials if m.named),
        next((m for m in links.materials if m.exact), links.materials[0] if links.materials else None),
    )


def _for_label(label: str, r: Reading, ctx: Context) -> Plan:
    tool, defaults = ctx.intents.get(label, (None, {}))
    if tool is None:
        return Plan(reply=replies.which_one(r, ctx))
    if (
        tool == "search_materials"
        and "get_material_detail" not in ctx.offered
        and "search_materials" not in ctx.offered
    ):
        return Plan(reply=replies.role_refusal(r.zh, tool, ctx))
    if tool not in ctx.offered and not (tool == "search_materials" and "get_material_detail" in ctx.offered):
        return Plan(reply=replies.role_refusal(r.zh, tool, ctx))
    builder = {
        "search_materials": _lookup,
        "get_inventory_stats": _stats,
        "list_low_stock": _stats,
        "get_stock_movements": _movements,
        "record_stock_movement": _booking,
        "create_purchase_request": _purchase,
        "create_new_intent": _teach,
    }.get(tool)
    if builder is None:
        return Plan(reply=replies.which_one(r, ctx))
    return builder(tool, dict(defaults), r, ctx)


# --- the tools -------------------------------------------------------------------------------------


def _place(r: Reading, kind: str) -> str | None:
    found = r.links.of(kind)
    return found[0].code if found else None


def _lookup(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    mention = primary(r.links)
    warehouse, category, supplier = _place(r, "warehouse"), _place(r, "category"), r.links.of("supplier")
    asked_for_a_list = re.search(words.SEARCH, r.text, re.I)
    if asked_for_a_list and len(r.links.materials) > 1:
        # "奶油相关的都有哪些？淡奶油、奶油奶酪这些": the list asked for is of the first, loosest word.
        mention = min(r.links.materials, key=lambda m: (m.named, m.span[0]))
    if (
        mention is not None
        and mention.exact
        and not category
        and "get_material_detail" in ctx.offered
        and not (asked_for_a_list and (not mention.named or len(r.links.materials) > 1))
    ):  # one material named: its detail, unless a search was asked for with a partial name
        return Plan("get_material_detail", {"material": mention.best.code})
    if mention is None and r.slots.codes and "get_material_detail" in ctx.offered:
        # A code no material has: the detail says so plainly, rather than a vague question.
        return Plan("get_material_detail", {"material": r.slots.codes[0]})
    if "search_materials" not in ctx.offered:
        return Plan(reply=replies.role_refusal(r.zh, "search_materials", ctx))
    if mention is not None:
        args["keyword"] = mention.text
    elif category:
        args["keyword"] = r.links.of("category")[0].name_zh
    elif supplier:
        args["keyword"] = supplier[0].name_zh
    elif warehouse and "get_inventory_stats" in ctx.offered:  # what a warehouse holds: its figures
        return Plan("get_inventory_stats", {"warehouse": warehouse})
    elif asked_for_a_list and (term := _asked_term(r)):
        args["keyword"] = term  # a kind the catalogue has no name for: search says what matches
    else:
        return Plan(reply=replies.which_one(r, ctx))
    if category:
        args["category"] = category
    if warehouse:
        args["warehouse"] = warehouse
    if r.slots.limit:
        args["limit"] = r.slots.limit
    if re.search(words.ON_HAND, r.text, re.I):
        args["in_stock"] = True
    return Plan("search_materials", args)


def _asked_term(r: Reading) -> str | None:
    rest = re.sub("|".join(map(re.escape, PLACEHOLDERS.values())), " ", r.masked)
    rest = re.sub(words.SEARCH, " ", re.sub(words.SEARCH_FILLER, " ", rest, flags=re.I), flags=re.I)
    term = " ".join(rest.split())
    return term if 2 <= len(term) <= 16 else None


def _stats(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if warehouse := _place(r, "warehouse"):
        args["warehouse"] = warehouse
    if category := _place(r, "category") or _category_of(primary(r.links)):
        args["category"] = category
    if r.slots.limit and tool == "list_low_stock":
        args["limit"] = r.slots.limit
    return Plan(tool, args)


def _category_of(mention: Mention | None) -> str | None:
    """The category a loose material word stands for in figures ("how much is tied up in
    chocolate"): the one that nearly all the materials it finds belong to."""
    if mention is None or mention.named or len(mention.candidates) < 2:
        return None
    categories = [c.category for c in mention.candidates]
    top = max(set(categories), key=categories.count)
    return top if top and categories.count(top) >= 0.75 * len(categories) else None


def _direction(text: str) -> str | None:
    for verbs, kind in ((words.TRANSFER, "transfer"), (words.ADJUST, "adjustment")):
        if re.search(verbs, text, re.I):
            return kind
    if re.search(r"出入|进出|in and out|ins and outs", text, re.I):
        return None  # both ways: every movement
    out, inn = re.search(words.OUT, text, re.I), re.search(words.IN, text, re.I)
    if out and inn:
        return (
            None
            if "出入" in text or "in and out" in text.lower()
            else ("outbound" if out.start() < inn.start() else "inbound")
        )
    return "outbound" if out else "inbound" if inn else None


def _movements(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if mention := primary(r.links):
        if not mention.exact:
            return Plan(reply=replies.which_material(r, mention))
        args["material"] = mention.best.code
    if warehouse := _place(r, "warehouse"):
        args["warehouse"] = warehouse
    if kind := _direction(r.text):
        args["movement_type"] = kind
    if r.slots.period:
        args["since"] = r.slots.period.since.isoformat()
        args["until"] = r.slots.period.until.isoformat()
    if r.slots.limit:
        args["limit"] = r.slots.limit
    return Plan(tool, args)


def _amount(r: Reading, mention: Mention | None) -> tuple[Decimal, str | None] | None:
    """The quantity to book: the first one said, with a second added when it is joined by "+",
    "and" or 和 ("7 cases + 2 blocks"); packs counted by what the material's spec says they hold."""
    if not r.slots.quantities:
        return None
    first, *rest = r.slots.quantities
    amount = _one_amount(first, mention)
    if amount is None or not rest:
        return amount
    joined = r.text[first.span[1] : rest[0].span[0]]
    if mention is None or not re.fullmatch(r"\s*(?:\+|＋|和|加|又|再加|plus|and)\s*", joined, re.I):
        return amount
    more = _one_amount(rest[0], mention)
    try:
        unit = mention.best.unit
        total = convert(amount[0], amount[1], unit) + convert(more[0], more[1], unit)
    except (DomainError, TypeError):
        return amount
    return total, unit


def _one_amount(q: slot.Quantity, mention: Mention | None) -> tuple[Decimal, str | None] | None:
    if q.packs is not None and mention is not None:
        size = slot.pack_size(mention.best.spec, q.pack)
        if size is None:
            return None
        amount, unit = q.packs * size[0], size[1]
        try:  # in the material's own unit where it converts: 6 cases of 500 g x 12 -> 36 kg
            return convert(amount, unit, mention.best.unit), mention.best.unit
        except DomainError:
            return amount, unit
    return q.amount, q.unit


def _booking(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    kind = args.get("movement_type") or "outbound"
    said = _direction(r.text)
    if said and said != kind and not (kind == "adjustment" and said in ("inbound", "outbound")):
        kind = said
    if said is None and kind in ("inbound", "outbound") and not _sure_of_direction(r):
        # No word says which way, and the classifier cannot tell either: a write does not guess.
        return Plan(reply=replies.ask(r.zh, "是入库还是出库？", "Is that going in or out of stock?"))
    allowed = ctx.movements_by_role.get(ctx.role or "", frozenset())
    if ctx.role and kind not in allowed:
        return Plan(reply=replies.movement_refusal(r.zh, kind, ctx))
    found = _one_material_and_amount(
        r,
        ("您要登记哪种原料？请说名称或编码，例如“高筋面粉”或“M001”。", "Which material? Give its name or code, e.g. “bread flour” or “M001”."),
        ("{}要登记多少？请带上单位，例如 20 公斤。", "How much {}? Give a quantity with its unit, e.g. 20 kg."),
    )  # fmt: skip
    if isinstance(found, Plan):
        return found
    mention, amount = found
    quantity, unit = amount
    if unit and _dimension(unit) != _dimension(mention.best.unit):
        return Plan(reply=replies.ask(
            r.zh,
            f"{mention.best.name_zh}按 {mention.best.unit} 计，{_number(quantity)} {unit} 换算不了。请问是多少 {mention.best.unit}？",
            f"{mention.best.name_en} is counted in {mention.best.unit}; {_number(quantity)} {unit} does not convert. How many {mention.best.unit}?",
        ))  # fmt: skip
    args.update(material=mention.best.code, movement_type=kind, quantity=_number(quantity))
    if unit:
        args["unit"] = unit
    warehouses = r.links.of("warehouse")
    if kind == "transfer":
        source, target = _route(r.text, warehouses)
        source = source or ctx.home_warehouse(mention.best.code)
        if not target or not source or source == target:
            return Plan(reply=replies.ask(r.zh, "从哪个仓库调到哪个仓库？", "From which warehouse to which?"))
        args["warehouse"], args["to_warehouse"] = source, target
    else:
        args["warehouse"] = warehouses[0].code if warehouses else ctx.home_warehouse(mention.best.code)
        if not args["warehouse"]:
            return Plan(reply=replies.ask(r.zh, "是哪个仓库？", "Which warehouse?"))
    args["reason"] = ("助手登记：" if r.zh else "Booked via assistant: ") + r.text.strip()[:200]
    return Plan(tool, args)


def _sure_of_direction(r: Reading) -> bool:
    p = dict(r.guess.ranked)
    book_in, book_out = p.get(BOOKINGS["inbound"], 0.0), p.get(BOOKINGS["outbound"], 0.0)
    return max(book_in, book_out) >= 0.65 and max(book_in, book_out) >= 4 * min(book_in, book_out)


def _route(text: str, warehouses) -> tuple[str | None, str | None]:
    if not warehouses:
        return None, None
    source = target = None
    for place in warehouses:
        before = text[max(0, place.span[0] - 8) : place.span[0]].lower()
        if re.search(rf"(?:{_FROM})\s*$", before, re.I):
            source = place.code
        elif re.search(rf"(?:{_TO})\s*(?:the\s+)?$", before, re.I):
            target = place.code
    if len(warehouses) >= 2 and (source is None or target is None):
        first, second = warehouses[0].code, warehouses[1].code
        source, target = (
            source or (first if target != first else second),
            target or (second if source != second else first),
        )
    elif len(warehouses) == 1 and source is None and target is None:
        target = warehouses[0].code
    return source, target


def _one_material_and_amount(
    r: Reading, which: tuple[str, str], how_much: tuple[str, str]
) -> tuple[Mention, tuple[Decimal, str | None]] | Plan:
    """The one material a write is about and how much of it, or the question to ask for what is
    missing: which material (`which`), which of several (their names), how much (`how_much`)."""
    if not r.links.materials:
        return Plan(reply=replies.ask(r.zh, *which))
    mention = primary(r.links)
    if not mention.exact:
        return Plan(reply=replies.which_material(r, mention))
    amount = _amount(r, mention)
    if amount is None:
        names = (mention.best.name_zh, mention.best.name_en)
        return Plan(reply=replies.ask(r.zh, how_much[0].format(names[0]), how_much[1].format(names[1])))
    return mention, amount


def _purchase(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    found = _one_material_and_amount(
        r,
        ("要采购哪种原料？", "Which material should be ordered?"),
        ("{}要采购多少？", "How much {} should be ordered?"),
    )
    if isinstance(found, Plan):
        return found
    mention, amount = found
    args.update(material=mention.best.code, quantity=_number(amount[0]))
    if amount[1]:
        args["unit"] = amount[1]
    if r.slots.due:
        args["needed_by"] = r.slots.due.isoformat()
    return Plan(tool, args)


_TOOL_WORDS = [
    ("get_material_detail", r"详情|详细|规格|单价|价格|保质期|detail|spec|price|info"),
    ("list_low_stock", r"低库存|缺货|补货|不足|快用完|low stock|running low|reorder|short"),
    ("get_inventory_stats", r"统计|总值|金额|价值|概况|stats|worth|value|summary|total"),
    ("record_stock_movement", r"盘点|调整|出库|入库|登记|领用|stocktake|book|adjust|movement_type"),
    ("get_stock_movements", r"流水|出入库记录|记录|变动|历史|movements|history|ledger|pull sheet"),
    ("create_purchase_request", r"采购|请购|订购|purchase|order|buy"),
    ("search_materials", r"搜索|查找|查询|找|search|find|look"),
]


def _teach(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    text = r.text
    name_match = re.search(
        r"(?:名称|名字|叫|named|called|name)\s*[:：]?\s*([A-Za-z][A-Za-z0-9_]{1,63})", text
    ) or re.search(
        r"\bintent\s+([a-z][a-z0-9]*_[a-z0-9_]{1,60})\b", text, re.I
    )  # "create intent stock_worth …"
    # Phrases in quotes: “…”, "…", 「…」 first; '…' only when nothing else is quoted, and an
    # apostrophe inside a word ("what's") never ends one.
    phrases = re.findall(r"[“\"「『]([^”\"」』]{1,50})[”\"」』]", text) or re.findall(
        r"(?<![A-Za-z])['‘]([^'’]{1,50}?)['’](?![A-Za-z])", text
    )
    if not phrases:
        m = re.search(
            r"(?:关键词|关键字|说法|phrases?|keywords?)\s*[:：]?\s*(.+?)(?:[，,;；]\s*(?:对应|用于|指向|for|means|→)|$)",
            text,
            re.I,
        )
        if m:
            phrases = [p.strip() for p in re.split(r"[、,，/]|\band\b|和", m.group(1)) if p.strip()]
    if not phrases:  # "以后有人说缺货清单就直接查低库存", "when someone says stock worth, show the stats"
        m = re.search(
            r"以后\S{0,3}说\s*(.{1,20}?)\s*(?:的时候|时)?\s*[，,]?\s*(?:就|都|便)", text
        ) or re.search(
            r"\bwhen (?:i|someone|people|staff|anyone) (?:says?|types?|writes?|asks?)\s+(.{1,40}?)\s*[,，]",
            text,
            re.I,
        )
        if m:
            phrases = [m.group(1).strip(" '\"“”")]
    if not phrases:  # "add intent: SOH should route to search_materials"
        m = re.search(
            r"(?:intent|意图|说法)\s*[:：]\s*(.{1,50}?)\s*(?:should|means|=|→|->|route|就是|对应|走)",
            text,
            re.I,
        )
        if m:
            phrases = [m.group(1).strip(" '\"“”")]
    parts = re.split(
        r"对应|用于|指向|就是|意思是|都走|走|means|for|→|->|route[sd]? (?:it )?to|goes? to", text, maxsplit=1
    )
    target = parts[1] if len(parts) > 1 else text
    named_tool = next(
        (t for t in sorted(ctx.who_can, key=len, reverse=True) if re.search(rf"\b{t}\b", text)), None
    )
    said = [(m.start(), t) for t, words in _TOOL_WORDS if (m := re.search(words, target, re.I))]
    tool_name = named_tool or (min(said)[1] if said else None)  # the first the request names
    if not phrases or tool_name is None:
        return Plan(reply=replies.ask(r.zh, "请告诉我新说法和它对应的功能，例如：新增意图：名称 shelf_life，关键词“保质期”，对应原料详情。",
                                "Tell me the phrases and what they mean, e.g. add an intent called shelf_life with the phrase 'expiry' for material details."))  # fmt: skip
    name = (
        name_match.group(1).lower()
        if name_match
        else "taught_" + hashlib.sha1("|".join(phrases).encode()).hexdigest()[:8]
    )
    args.update(name=name, keywords=phrases[:30], tool_name=tool_name)
    if tool_name == "record_stock_movement" and (kind := _direction(target)):
        args["default_arguments"] = {"movement_type": kind}
    return Plan(tool, args)


def _dimension(unit: str) -> str:
    return {"kg": "mass", "g": "mass", "斤": "mass", "t": "mass", "L": "volume", "mL": "volume"}.get(
        unit, "count"
    )


def _number(value: Decimal):
    return int(value) if value == value.to_integral_value() else float(value)
