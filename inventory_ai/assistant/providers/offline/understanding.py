"""Deciding what a request means, from the three parts together: what it names (linking.py), how
it asks (classifier.py) and its quantities, periods and dates (slots.py).

The decision is a Plan: a tool call with its arguments (and, for a report, the tool that formats the
rows afterwards), or a reply without a tool: a short question when the request is vague or names
several materials without a clear best one, a plain word when the user's role lacks the tool (and
who can), a polite answer with examples to small talk, a refusal to destroy data or to override the
rules. Never a tool the user lacks.
"""

from __future__ import annotations

import re
from decimal import Decimal

from inventory_ai.assistant.providers.offline import (
    amounts,
    asks,
    lookups,
    replies,
    tables,
    tagger,
    teaching,
    words,
)
from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline.classifier import CHITCHAT, DESTRUCTIVE
from inventory_ai.assistant.providers.offline.linking import Mention
from inventory_ai.assistant.providers.offline.reading import (
    Context,
    Plan,
    Reading,
    direction,
    place,
    primary,
    read,
)
from inventory_ai.services.screening import screen
from inventory_ai.text import language_of

CONFIDENT = 0.30  # below this, and with nothing named, the request is asked about, not guessed
DATA_LABELS = ("lookup", "stats", "low_stock", "movements")
BOOKINGS = {"inbound": "book_in", "outbound": "book_out", "transfer": "transfer", "adjustment": "stocktake"}
_FROM = r"从|由|from|out of"
_TO = r"到|去|进|往|至|调往|→|->|to|into"


def plan(text: str, ctx: Context, earlier: tuple[str, ...] = ()) -> Plan:
    """The plan for a message: its asks (asks.py) each read as a request of its own; `earlier` are
    the conversation's recent user turns, for a follow-up that leans on them."""
    return asks.message(
        text,
        earlier,
        one=lambda t: _one(t, ctx),
        named=lambda t: _named(t, ctx),
        refused=lambda t: _refused(t, read(t, ctx)),
        zh=(ctx.language or language_of(text)) == "zh",
    )


def _named(text: str, ctx: Context) -> str | None:
    """The material a text names exactly, as typed."""
    mention = primary(read(text, ctx).links)
    return mention.text if mention is not None and mention.exact else None


def _refused(text: str, r: Reading) -> bool:
    return bool(
        screen(text).flagged
        or _destroys(text, r)
        or re.search(words.TAMPER, text, re.I)
        or re.search(words.SECRETS, text, re.I)
        or re.search(words.HARM, text, re.I)
    )


def _one(text: str, ctx: Context) -> Plan:
    # What the request says it is not is blanked, the rest keeps its place (a booking's reason keeps
    # what was typed).
    typed, text = text, re.sub(words.NEGATED, lambda m: " " * len(m.group(0)), text, flags=re.I)
    if re.search(words.QUESTION, re.sub(words.SCENE, "", text, flags=re.I), re.I):
        text = re.sub(words.SCENE, lambda m: " " * len(m.group(0)), text, flags=re.I)
    text = words.from_pinyin(text)  # "xisha tang dao le 4 dai, ru ku": its verbs and packs as characters
    text = words.typos_fixed(text)  # "pls ordr 500kg", "main warehose"
    r = read(text, ctx, typed)
    if _refused(text, r):
        return Plan(reply=replies.refusal(r.zh))
    if not r.links.of("warehouse") and (unknown := _unknown_warehouse(text, r, ctx.linker.warehouses())):
        return Plan(reply=replies.no_such_warehouse(r.zh, unknown, ctx.linker.warehouses()))
    if listed := lookups.what_is_in(text, r, ctx):
        return listed
    teaching_words, not_teaching = bool(re.search(words.TEACH, text, re.I)), _not_teaching(text, r)
    teaching = teaching_words and not not_teaching
    if not teaching and (typed_table := tables.table(text, r, ctx.offered)):
        return typed_table  # "make a csv: butter 4 cases, cream 6 cases": the rows are the request's own
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
    by_building_only = all(p.by_building for p in r.links.places) and not (r.links.materials or r.slots.codes)
    about_stock = (
        named
        and not by_building_only
        and (
            r.guess.confidence < 0.6
            or any(m.named for m in r.links.materials)
            or r.links.places
            or r.slots.codes
            or len(re.findall(words.WORD, r.masked.lower())) <= 6  # "hi, butter?": little else
        )
    )
    if label == DESTRUCTIVE or (label == CHITCHAT and about_stock):  # the model's second thought
        label = next(
            lbl for lbl, _p in r.guess.ranked if lbl != DESTRUCTIVE and (lbl != CHITCHAT or not about_stock)
        )
    taught = teaching_words or (label == "teach" and r.guess.confidence >= CONFIDENT)
    if taught and not not_teaching:
        label = "teach"
    elif taught and label == "teach":  # teaching words the message does not mean: how else it reads
        label = next(lbl for lbl, _p in r.guess.ranked if lbl not in ("teach", CHITCHAT, DESTRUCTIVE))
    elif (
        re.search(r"(?<![A-Za-z])PR(?![A-Za-z])|请购|采购申请|purchase request|\breq(?:uisition)?\b", text)
        and r.links.materials
    ) or (
        re.search(r"\brequest(?:ing)?\b", text, re.I)
        and r.slots.quantities
        and r.links.materials
        and not direction(text)
        and not re.search(r"\bout\b|\bissue|\bbook", text, re.I)  # "Kitchen request: 2 bags, issue from main"
    ):
        label = "purchase"  # the purchase request's own names: no other reading of them
    elif (
        r.links.materials
        and not r.slots.quantities
        and re.search(words.REORDER_LEVEL, text, re.I)
        and not re.search(words.BELOW, text, re.I)
        and _asks(text)
    ):
        label = "lookup"  # "what's the reorder level for…": a figure of the material's detail
    elif _only_names(r.masked) and named:
        label = "lookup"
    elif (
        label not in (CHITCHAT, DESTRUCTIVE)
        and not r.slots.quantities
        and direction(text)
        and (re.search(words.EVENT_ASKED, text, re.I) or (r.slots.period and not named))
        and not re.search(words.NOT_AN_EVENT, text, re.I)
    ):
        label = "movements"  # "谁收的", "did the butter come in today?", "transfers last week": events
    elif (
        r.slots.period
        and r.links.materials
        and not r.slots.quantities
        and re.search(words.ACTIVITY, text, re.I)
    ):
        label = "movements"  # "what's been happening with the fresh yeast over the past 5 days"
    elif not r.links.materials and re.search(words.WHAT_TO_BUY, text, re.I):
        label = "low_stock"  # "我该买点啥", "what should we order?": what is running low
    elif label == CHITCHAT and not r.slots.quantities:
        return Plan(reply=replies.small_talk(r.zh, ctx))
    elif label in (CHITCHAT, DESTRUCTIVE) or (r.guess.confidence < CONFIDENT and not named):
        return Plan(reply=replies.which_one(r, ctx))
    future = re.search(words.ON_ARRIVAL + "|" + words.FUTURE, text, re.I)
    if label in BOOKINGS.values() and (
        (re.search(words.BUY, text, re.I) and (future or r.slots.due)) or (r.slots.due and future)
    ):
        label = "purchase"  # "申请淡奶油20箱，到货后搬到冷库", "500个月饼盒，明年七月底前到货": still to come
    if label in DATA_LABELS and r.slots.quantities and (floor := tagger.booking(r)):
        label = BOOKINGS[floor.way]  # "冷库入淡奶油十箱", "面包袋 入 三千五": the floor's word order
    if (
        label == "purchase"
        and not r.slots.due
        and (said := direction(text))
        and not re.search(words.BUY, text, re.I)
        and not re.search(words.ON_ARRIVAL, text, re.I)
    ):
        label = BOOKINGS[said]  # "move some cream cheese over", "incoming: mango puree x4": nothing is bought
    if (
        label in ("lookup", "stats", "low_stock")
        and r.slots.quantities
        and r.links.materials
        and re.search(words.ORDER_VERB, text, re.I)
    ):
        label = "purchase"  # "we need 50 cases of bread bags ordered": an amount to buy
    elif label == "lookup" and re.search(words.BELOW, text, re.I) and re.search(words.LOW_WORDS, text, re.I):
        label = "low_stock"  # "are any of the egg products below their reorder point?"
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
    if (
        label == "stats"
        and not r.links.places
        and re.search(words.KINDS, text, re.I)
        and not re.search(words.FIGURES, text, re.I)
    ):
        label = "lookup"  # "看看各种油的库存": the oils, not the warehouse's figures
    returned = r.slots.quantities and r.links.materials and re.search(words.RETURNED, text, re.I)
    if returned and not re.search(words.QUESTION, text, re.I) and label not in ("teach", "purchase"):
        label = "book_in"  # goods brought back to stock are booked in, whenever they were taken
    if (
        label == "movements"
        and r.slots.quantities
        and r.links.materials
        and (said := direction(text)) in ("inbound", "outbound")
        and not _asks(text)
        and not re.search(words.RECORDS, text, re.I)
    ):
        label = BOOKINGS[said]  # "今天 whole milk 用了 2 cases": what happened told with its amount
    booking = label in BOOKINGS.values()
    if booking and not r.slots.quantities and (_asks(text) or re.search(words.RECORDS, text, re.I)):
        label = "movements"  # asked about, not told, or their records: what happened is history
    elif label in ("lookup", "stats") and r.links.materials and re.search(words.RECORD_NOUNS, text, re.I):
        label = "movements"  # "can you check the mascarpone transfers"
    elif label in ("lookup", "stats") and r.links.materials and not r.slots.period and (act := _acted(text)):
        # A movement verb with a material ("调拨一下淡奶油"): asked about, its history; told, a
        # booking, which asks for what it lacks.
        label = "movements" if _asks(text) else BOOKINGS[act]
    elif (
        label in ("low_stock", "lookup", "stats")
        and r.slots.period
        and not r.slots.quantities
        and direction(text)
        and not re.search(words.NOT_AN_EVENT, text, re.I)
    ):
        label = "movements"  # something that went in or out at a time: an event
    return _for_label(label, r, ctx)


def _not_teaching(text: str, r: Reading) -> bool:
    """A message with teaching's words that is a booking or a question about what someone said
    ("the driver keeps saying 'two pallets' … book in 20 bags", 老王说“淡奶油到了”是真的吗): an amount
    outside the quoted phrases, or a question about them."""
    quoted = [m.span() for m in re.finditer(words.QUOTED, text)]
    outside = [
        q
        for q in r.slots.quantities
        if not any(a <= q.span[0] < b for a, b in quoted) and not (q.amount == 1 and q.unit in (None, "pcs"))
    ]  # "教它一个新词", "add 一个 intent": one of something, not an amount
    unquoted = slot.blank(text, quoted)
    if quoted or "就是" in text:  # "…能记住吗": whether the lesson was taken, not a question about it
        unquoted = re.sub(words.LESSON_CHECK, " ", unquoted, flags=re.I)
    return bool(outside) or bool(re.search(r"吗\s*[？?]?\s*$|几点|是不是|真的", unquoted))


def _unknown_warehouse(text: str, r: Reading, warehouses: list[tuple[str, str, str]]) -> str | None:
    """A warehouse the request names that the plant does not have ("WH04", 成品仓): asked about,
    never answered for all warehouses instead."""
    ours = {int(n) for code, _zh, _en in warehouses for n in re.findall(r"\d+", code)}
    unquoted = re.sub(words.QUOTED, lambda q: " " * len(q.group(0)), text)
    for m in re.finditer(words.WAREHOUSE_SAID, unquoted, re.I):  # a phrase being taught is not asked about
        if any(p.span[0] < m.end() and p.span[1] > m.start() for p in r.links.places):
            continue
        number = re.search(r"\d+", m.group(0))
        if number and int(number.group(0)) in ours:
            continue  # "WH-01": ours, written another way
        if any(q.span[0] < m.end() and q.span[1] > m.start() for q in r.slots.quantities):
            continue
        name = m.group("zh")
        if name and (
            set(name) & words.NOT_A_STORE_NAME
            or any(mention.span[0] < m.end() and mention.span[1] > m.start() for mention in r.links.materials)
        ):
            continue
        return m.group(0)
    return None


def _asks(text: str) -> bool:
    """A question, not a request put politely: "can you move some cream cheese over?" asks for a
    booking (and is asked how much), "who moved the cream cheese?" asks what happened."""
    polite = re.search(words.POLITE_ASK, text, re.I)
    if polite:
        if re.search(words.CHECKING, text, re.I):
            return True  # "can you check the mascarpone transfers", 帮我查一下…调拨过没有
        text = re.sub(words.POLITE_ASK, " ", text, flags=re.I).replace("?", " ").replace("？", " ")
    return bool(re.search(words.QUESTION, text, re.I))


def _destroys(text: str, r: Reading) -> bool:
    if r.guess.label == DESTRUCTIVE and re.search(words.DESTROY, text, re.I):
        return True
    if re.search(words.ZERO_VERB, text, re.I) and _everything(text, r):
        return True
    if not re.search(words.DESTROY_VERB, text, re.I):
        return False
    records = re.search(
        r"数据库|数据|记录|流水|历史|账|database|records|history|ledger|table|data\b", text, re.I
    )
    return bool(
        records or (re.search(words.BULK, text, re.I) and not r.links.materials) or _everything(text, r)
    )


def _everything(text: str, r: Reading) -> bool:
    """ "把所有物料库存改成0", "every material's stock": all of it, whatever part of a name is found
    elsewhere in the request ("改" of 改良剂); not one material's stock said whole (红糖的所有库存), nor a
    list asked for."""
    return bool(
        re.search(words.EVERY_MATERIAL, text, re.I)
        and not any(m.named for m in r.links.materials)
        and not re.search(words.LISTED, text, re.I)
    )


def _acted(text: str) -> str | None:
    """The movement a request tells to make, by its verb (出库, 调拨, stocktake…), if any."""
    if re.search(r"出入库|进出|in and out|ins and outs", text, re.I):
        return None  # both ways: the records, not a movement to make
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


def _for_label(label: str, r: Reading, ctx: Context) -> Plan:
    tool, defaults = ctx.intents.get(label, (None, {}))
    if (
        tool in ("search_materials", "record_stock_movement", "create_purchase_request")
        and not (r.links.materials or r.links.places or r.slots.codes)
        and (found := ctx.linker.described(slot.blank(r.text, r.slots.spans)))
    ):
        r.links.materials.append(found)  # "the spray that stops trays sticking": described, not named
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
        "search_materials": lookups.lookup,
        "get_inventory_stats": lookups.stats,
        "list_low_stock": lookups.stats,
        "get_stock_movements": _movements,
        "record_stock_movement": _booking,
        "create_purchase_request": _purchase,
        "create_new_intent": teaching.teach,
    }.get(tool)
    if builder is None:
        return Plan(reply=replies.which_one(r, ctx))
    return builder(tool, dict(defaults), amounts.packs_by_spec(r), ctx)


# --- the tools -------------------------------------------------------------------------------------


def _movements(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if mention := primary(r.links):
        if not mention.exact:
            return Plan(reply=replies.which_material(r, mention))
        args["material"] = mention.best.code
    if warehouse := place(r, "warehouse"):
        args["warehouse"] = warehouse
    if kind := direction(r.text):
        args["movement_type"] = kind
    if r.slots.period:
        args["since"] = r.slots.period.since.isoformat()
        args["until"] = r.slots.period.until.isoformat()
    if r.slots.limit:
        args["limit"] = r.slots.limit
    return Plan(tool, args)


def _booking(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    kind = args.get("movement_type") or "outbound"
    said = direction(r.text) or ((floor := tagger.booking(r)) and floor.way)  # 淡奶油10箱进冷库
    if said and said != kind and not (kind == "adjustment" and said in ("inbound", "outbound")):
        kind = said
    if said is None and kind in ("inbound", "outbound") and not _sure_ofdirection(r):
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
    if kind == "adjustment":
        amount = amounts.counted(r, mention) or amount
    elif kind != "adjustment" and (bare := amounts.bare_number(r, mention)):
        return Plan(reply=replies.ask(r.zh, *bare))  # "收到淡奶油10": ten litres or ten cases?
    quantity, unit = amount
    if unit and amounts.dimension(unit) != amounts.dimension(mention.best.unit):
        return Plan(reply=replies.ask(
            r.zh,
            f"{mention.best.name_zh}按 {mention.best.unit} 计，{amounts.number(quantity)} {unit} 换算不了。请问是多少 {mention.best.unit}？",
            f"{mention.best.name_en} is counted in {mention.best.unit}; {amounts.number(quantity)} {unit} does not convert. How many {mention.best.unit}?",
        ))  # fmt: skip
    args.update(material=mention.best.code, movement_type=kind, quantity=amounts.number(quantity))
    if unit:
        args["unit"] = unit
    warehouses = r.links.of("warehouse")
    if kind == "transfer":
        source, target = _route(r.text, warehouses)
        source = source or ctx.home_warehouse(mention.best.code, ctx.warehouses)
        if not target or not source or source == target:
            return Plan(reply=replies.ask(r.zh, "从哪个仓库调到哪个仓库？", "From which warehouse to which?"))
        args["warehouse"], args["to_warehouse"] = source, target
    else:
        args["warehouse"] = (
            warehouses[0].code if warehouses else ctx.home_warehouse(mention.best.code, ctx.warehouses)
        )
        if not args["warehouse"]:
            return Plan(reply=replies.ask(r.zh, "是哪个仓库？", "Which warehouse?"))
    args["reason"] = ("助手登记：" if r.zh else "Booked via assistant: ") + r.typed.strip()[:200]
    return Plan(tool, args)


def _sure_ofdirection(r: Reading) -> bool:
    p = dict(r.guess.ranked)
    book_in, book_out = p.get(BOOKINGS["inbound"], 0.0), p.get(BOOKINGS["outbound"], 0.0)
    return max(book_in, book_out) >= 0.65 and max(book_in, book_out) >= 4 * min(book_in, book_out)


def _route(text: str, warehouses) -> tuple[str | None, str | None]:
    if not warehouses:
        return None, None
    source = target = None
    for found in warehouses:
        before = text[max(0, found.span[0] - 8) : found.span[0]].lower()
        if re.search(rf"(?:{_FROM})\s*$", before, re.I):
            source = found.code
        elif re.search(rf"(?:{_TO})\s*(?:the\s+)?$", before, re.I):
            target = found.code
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
    amount = amounts.said(r, mention)
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
    if bare := amounts.bare_number(r, mention):
        return Plan(reply=replies.ask(r.zh, *bare))  # "申请高筋面粉 20": 20 kg or 20 bags, a write either way
    args.update(material=mention.best.code, quantity=amounts.number(amount[0]))
    if amount[1]:
        args["unit"] = amount[1]
    if r.slots.due:
        args["needed_by"] = r.slots.due.isoformat()
    return Plan(tool, args)
