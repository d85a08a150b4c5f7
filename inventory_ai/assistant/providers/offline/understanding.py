"""Deciding what a request means from what it names (linking.py), how it asks (classifier.py, labels.py)
and its quantities, periods and dates (slots.py): a Plan, a tool call with its arguments, or a reply
without a tool (a question when it is vague or names several materials, who can when the role
cannot, a polite word to small talk, a refusal to destroy data). Never a tool the user lacks."""

from __future__ import annotations

import re
from dataclasses import asdict
from itertools import pairwise

from inventory_ai.assistant.providers.offline import (
    amounts,
    asks,
    labels,
    lookups,
    replies,
    tables,
    tagger,
    teaching,
    words,
)
from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline.classifier import DESTRUCTIVE
from inventory_ai.assistant.providers.offline.labels import BOOKINGS, DATA_LABELS
from inventory_ai.assistant.providers.offline.linking import Mention, for_a_write
from inventory_ai.assistant.providers.offline.reading import (
    Context,
    Plan,
    Reading,
    described_by_clause,
    direction,
    place,
    primary,
    read,
)
from inventory_ai.text import language_of


def plan(text: str, ctx: Context, earlier: tuple[str, ...] = ()) -> Plan:
    """The plan for a message: its asks (asks.py) each read as a request of its own; `earlier` are
    the conversation's recent user turns, for a follow-up that leans on them."""
    reader = lambda part: read(part, ctx)  # noqa: E731
    meant = amounts.corrected(text, reader)  # a booking corrected as it is said, or the text
    before = earlier[0] if earlier else ""
    for turn in earlier[1:]:  # "入库全蛋液5桶", "不对，是6桶": the booking the turns before said last
        before = amounts.restated(turn, before, reader) or turn
    fixed = amounts.restated(text, before, reader) if earlier else None  # that booking corrected by this
    if fixed and _one(before, ctx).tool == "record_stock_movement":  # never a purchase
        meant = fixed
    zh = (ctx.language or language_of(text)) == "zh"
    how = dict(
        one=lambda t: _one(t, ctx),
        named=lambda t: _named(t, ctx),
        refused=lambda t: _refused(t, read(t, ctx)) or bool(ctx.flagged and _ORDER.search(t)),
        zh=zh,
        placed=lambda t: next((t[p.span[0] : p.span[1]] for p in read(t, ctx).links.places), None),
    )
    whole = asks.message(meant or text, earlier, **how)
    writes = {whole.tool, whole.after and whole.after.tool} & asks.WRITES
    if (held := _held(meant or text, whole, writes, ctx)) is not None:
        return held
    said = re.search(words.CORRECTION_SAID, text, re.I)  # 不对, 错了, "sorry": a correction said
    # A correction of the turns before read alone as an adjustment, no count word its own ("oops, 30 kg not 20")
    counts = re.search(words.ORDER_OR_COUNT, text, re.I)
    adjusts = whole.arguments.get("movement_type") == "adjustment" and not counts
    if writes and (meant is None or (earlier and said and not fixed and adjusts)):
        return Plan(reply=replies.said(zh, "correction_unclear"))  # never a guess
    if meant == text and "create_purchase_request" in writes and amounts.soft_correction_said(text):
        return Plan(reply=replies.said(zh, "purchase_unclear"))  # "…20袋，不好意思，30袋的话多少钱"
    if ctx.booked_before and writes and said:
        return Plan(reply=replies.said(zh, "booked_before"))  # booked or waiting: a correction books it twice
    asked = re.search(words.QUESTION, text, re.I)  # 不对，低筋面粉库存是多少来着 after a purchase: asked
    if earlier and (writes or (said and not asked)) and _files_again(text, whole, writes, earlier[-1], ctx):
        return Plan(reply=replies.said(zh, "purchase_filed"))
    return whole


def _files_again(text: str, whole: Plan, writes: set, before: str, ctx: Context) -> bool:
    """After a purchase request (`before`, filed unconfirmed), a message correcting it ("sorry, 30 bags") or
    leaning on it ("那低筋面粉呢？") files nothing, nor a correction leaning on a turn ("不对，是采购"): asked."""
    alone = plan(text, ctx)  # the message without the turns before it
    leans = (alone.tool, alone.arguments) != (whole.tool, whole.arguments)
    buys, marked = "create_purchase_request" in writes, bool(re.search(words.CORRECTION_SAID, text, re.I))
    if not (marked or (leans and buys)):
        return False
    return _one(before, ctx).tool == "create_purchase_request" or (buys and marked and leans)


def _held(text: str, whole: Plan, writes: set, ctx: Context) -> Plan | None:
    """A write held, not ordered now (asked about, for when the goods come, a count not to book, a remark
    on stock, an order quoted): the material looked up instead, or which one asked. None: ordered."""
    r = read(text, ctx)
    mention = primary(r.links)
    books = re.compile(words.ORDER_OR_COUNT, re.I)  # a word that books, buys or counts
    quoted = [m.span() for m in re.finditer(f"{words.QUOTED}|{words.PASTED}", text, re.I)]
    own = slot.blank(text, quoted)  # the user's own words: what is quoted or pasted blanked
    amount_quoted = any(own[q.span[0]] == " " for q in r.slots.quantities) and not whole.note
    if amount_quoted and labels.asks(own) and not books.search(own):  # an order quoted and asked about
        name = mention.text if mention and not _named(own, ctx) else ""
        return _one(f"{name} {own}", ctx)  # the user's own question, with the name it is about
    open_ = bool(writes) or not whole.tool  # a write proposed, or nothing understood
    booking = "record_stock_movement" in writes
    for_later = booking and re.search(words.BOOKED_ON_ARRIVAL, text, re.I)  # 等…到了再入库
    asked = (open_ or direction(text)) and re.search(words.BOOKING_HELD, text, re.I)  # 出库…，行不行
    left_alone = open_ and re.search(words.BOOKS_LEFT_ALONE, text, re.I)  # 盘点…，先别动账
    # Every amount a remark on stock (剩下的3袋退回), no word that books or counts; never a booking's amount
    remarks = [amounts.remarked(text, q) for q in r.slots.quantities] if not booking else []
    only_remarks = open_ and all(remarks or [False]) and not books.search(text)
    if mention and (for_later or asked or left_alone or only_remarks):
        return _one(mention.text, ctx)  # the material's detail, or which one is meant
    return None


def _named(text: str, ctx: Context) -> str | None:
    """The material a text names exactly, as typed."""
    mention = primary(read(text, ctx).links)
    return mention.text if mention is not None and mention.exact else None


_ORDER = re.compile(words.GIVES_ORDERS, re.I)  # which part of a message intake flagged gives orders
_MOVES = re.compile(f"{words.ACTS_TRANSFER}|{words.MOVED_FROM}|{words.MOVED_TO}", re.I)  # 调拨, 从, 到


def _refused(text: str, r: Reading) -> bool:
    return bool(_destroys(text, r) or re.search(words.REFUSED, text, re.I))


def _one(text: str, ctx: Context) -> Plan:
    typed, text = text, _as_meant(text)
    r = read(text, ctx, typed)
    if (first := _before_asking(text, r, ctx)) is not None:
        return first
    label = labels.label_of(text, r, ctx)
    if isinstance(label, Plan):
        return label
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
    return _for_label(labels.told_or_asked(label, text, r), r, ctx)


def _as_meant(text: str) -> str:
    """The request as meant: what it says it is not and the scene around a question blanked (a booking's
    reason keeps what was typed), pinyin request words as characters, typos fixed ("pls ordr")."""
    not_now = f"{words.NEGATED}|(?:{words.NOT_NOW})(?=\\s*[，,。！!；;])"  # "先别出库，帮我查下…"
    text = re.sub(not_now, lambda m: " " * len(m.group(0)), text, flags=re.I)
    if re.search(words.QUESTION, re.sub(words.SCENE, "", text, flags=re.I), re.I):
        text = re.sub(words.SCENE, lambda m: " " * len(m.group(0)), text, flags=re.I)
    return words.typos_fixed(words.from_pinyin(text))


def _before_asking(text: str, r: Reading, ctx: Context) -> Plan | None:
    """What is settled before how the request asks: a refusal, a warehouse the plant does not have,
    what a place or kind holds, a table of rows the user typed."""
    if _refused(text, r) or (ctx.flagged is not None and r.typed == ctx.flagged):
        return Plan(reply=replies.said(r.zh, "refusal"))
    if not r.links.of("warehouse") and (unknown := _unknown_warehouse(text, r, ctx.linker.warehouses())):
        return Plan(reply=replies.no_such_warehouse(r.zh, unknown, ctx.linker.warehouses()))
    if listed := lookups.what_is_in(text, r, ctx):
        return listed
    teaching = re.search(words.TEACH, text, re.I) and not labels.not_teaching(text, r)
    if not teaching and (typed_table := tables.table(text, r, ctx.offered)):
        return typed_table  # "make a csv: butter 4 cases, cream 6 cases": the rows are the request's own
    return None


def _unknown_warehouse(text: str, r: Reading, warehouses: list[tuple[str, str, str]]) -> str | None:
    """A warehouse the request names that the plant does not have ("WH04", 成品仓): asked about,
    never answered for all warehouses instead."""
    ours = {int(n) for code, _zh, _en in warehouses for n in re.findall(r"\d+", code)}
    unquoted = re.sub(words.QUOTED, lambda q: " " * len(q.group(0)), text)
    for m in re.finditer(words.WAREHOUSE_SAID, unquoted, re.I):  # a phrase being taught is not asked about
        number, name = re.search(r"\d+", m.group(0)), m.group("zh")
        said = [*r.links.places, *r.slots.quantities, *(r.links.materials if name else ())]
        if any(s.span[0] < m.end() and s.span[1] > m.start() for s in said):
            continue  # a place, an amount, or (said in Chinese) a material's name
        if (number and int(number.group(0)) in ours) or (name and set(name) & words.NOT_A_STORE_NAME):
            continue  # "WH-01": ours, written another way
        return m.group(0)
    return None


def _destroys(text: str, r: Reading) -> bool:
    zeroed = re.search(words.ZERO_VERB, text, re.I) and _everything(text, r)
    if zeroed or (r.guess.label == DESTRUCTIVE and re.search(words.DESTROY, text, re.I)):
        return True
    if not re.search(words.DESTROY_VERB, text, re.I):
        return False
    bulk = re.search(words.BULK, text, re.I) and not r.links.materials
    return bool(re.search(words.RECORDS_OF, text, re.I) or bulk or _everything(text, r))


def _everything(text: str, r: Reading) -> bool:
    """ "把所有物料库存改成0", "every material's stock": all of it, whatever part of a name is found ("改" of
    改良剂); not one material's stock said whole (红糖的所有库存), nor a list asked for."""
    every = re.search(words.EVERY_MATERIAL, text, re.I) and not re.search(words.LISTED, text, re.I)
    return bool(every and not any(m.named for m in r.links.materials))


def _for_label(label: str, r: Reading, ctx: Context) -> Plan:
    tool, defaults = ctx.intents.get(label, (None, {}))
    if (
        tool in ("search_materials", "record_stock_movement", "create_purchase_request")
        and not (r.links.materials or r.links.places or r.slots.codes)
        and (said := slot.blank(r.text, r.slots.spans))
        and (found := described_by_clause(said, [], ctx.linker) or ctx.linker.described(said))
        and len(found.text) > 1  # one character (少 of 少了2公斤) describes nothing
    ):
        r.links.materials.append(found)  # "the spray that stops trays sticking": described, not named
    detail = tool == "search_materials" and "get_material_detail" in ctx.offered  # a search answered by one
    if tool and tool not in ctx.offered and not detail:
        return Plan(reply=replies.role_refusal(r.zh, tool, ctx))
    if (builder := _BUILDERS.get(tool)) is None:  # no tool for the label, or none built from a reading
        return Plan(reply=replies.which_one(r, ctx))
    return builder(tool, dict(defaults), amounts.packs_by_spec(r), ctx)  # the tools' builders below


def _movements(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if mention := primary(r.links):
        if not mention.exact:
            return Plan(reply=replies.which_material(r, mention))
        args["material"] = mention.best.code
    if warehouse := place(r, "warehouse"):
        args["warehouse"] = warehouse
    stores = sorted(p.span for p in r.links.of("warehouse"))  # 冷库到主仓 is a route, 冷库和主仓 two places
    route = any(re.fullmatch(words.ROUTE_BETWEEN, r.text[a[1] : b[0]], re.I) for a, b in pairwise(stores))
    if kind := ("transfer" if route else None) or direction(r.text):
        args["movement_type"] = kind  # a route between two stores is a transfer, whatever its verb
    if r.slots.period:
        args.update(since=r.slots.period.since.isoformat(), until=r.slots.period.until.isoformat())
    if r.slots.limit:
        args["limit"] = r.slots.limit
    return Plan(tool, args)


def _each(tool: str, r: Reading, ctx: Context) -> Plan | None:
    """A write said not to be done asks what is; two materials each with its amount are two writes,
    or the question one of them needs (amounts.each_booked). None: one write to read."""
    if said := _not_now(r.typed):
        return Plan(reply=replies.said(r.zh, said))
    plans = [_one(text, ctx) for text in amounts.each_booked(r) or ()]
    if plans and re.search(words.SWAPPED, r.typed, re.I):
        return Plan(reply=replies.said(r.zh, "correction_unclear"))  # "把高筋面粉10公斤换成低筋面粉": which?
    if re.search(words.NOT_EACH, r.typed, re.I) or len({p.arguments.get("movement_type") for p in plans}) > 1:
        return None  # "把高筋面粉10公斤换成低筋面粉", "有盐黄油退回2公斤": no two bookings
    if plans and all(p.tool == tool for p in plans):
        return Plan(tool, plans[0].arguments, after=plans[1])
    return next((p for p in plans if p.tool != tool), None)


def _not_now(typed: str) -> str | None:
    """The booking verb said not to be done (先别出库, "don't book out … yet"): "not_booked"; said first, another
    order after it (不要入库，淡奶油10箱是退货): asked. None: the order stands (不要出库太多, 不用出库单, 别出错了)."""
    if re.search(words.DEFERRED, typed):
        return "not_booked"  # "出库无盐黄油5公斤，改成明天再出": not now
    said = [m for m in re.finditer(words.NOT_NOW, typed, re.I) if not typed[: m.start()].endswith("不是")]
    said = [m for m in said if not re.match(rf"\s*(?:{words.NOT_NOW_OF_ELSE})", typed[m.end() :])]
    rest = re.sub(f"(?:{words.NOT_NOW})(?:\\s*(?:out|in)\\b)?", " ", typed, flags=re.I)  # don't book out
    order = re.search(words.BOOKS_OR_BUYS, rest, re.I)
    if said and order and said[0].start() < order.start():
        return "correction_unclear"
    return "not_booked" if said and not order else None


def _booking(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if each := _each(tool, r, ctx):
        return each
    kind = args.get("movement_type") or "outbound"
    said = direction(r.text) or ((floor := tagger.booking(r)) and floor.way)  # 淡奶油10箱进冷库
    if said and said != kind and not (kind == "adjustment" and said in ("inbound", "outbound")):
        kind = said
    if said is None and kind in ("inbound", "outbound") and not _sure_ofdirection(r):
        # No word says which way, and the classifier cannot tell either: a write does not guess.
        return Plan(reply=replies.said(r.zh, "in_or_out"))
    if ctx.role and kind not in ctx.movements_by_role.get(ctx.role, frozenset()):
        return Plan(reply=replies.movement_refusal(r.zh, kind, ctx))
    found = _one_material_and_amount(r, "which_to_book", "how_much_to_book", ctx)
    if isinstance(found, Plan):
        return found
    mention, amount = found
    if kind == "transfer" and len(r.slots.quantities) > 1 and not _MOVES.search(r.text):
        # Two stores each with its own figure, no word that moves goods (冷库279升，主仓库16.8升): levels told
        return Plan("get_material_detail", {"material": mention.best.code})
    if asked := amounts.not_a_level(r, kind):
        return Plan(reply=replies.said(r.zh, asked, **asdict(mention.best)))  # its names and unit
    if kind == "adjustment":
        amount = amounts.counted(r, mention) or amount
    elif kind != "adjustment" and (bare := amounts.bare_number(r, mention)):
        return Plan(reply=replies.ask(r.zh, *bare))  # "收到淡奶油10": ten litres or ten cases?
    quantity, unit = amount
    if unit and amounts.dimension(unit) != amounts.dimension(mention.best.unit):
        figures = dict(asdict(mention.best), quantity=amounts.number(quantity), said=unit)
        return Plan(reply=replies.said(r.zh, "does_not_convert", **figures))
    args.update(material=mention.best.code, movement_type=kind, quantity=amounts.number(quantity))
    if unit:
        args["unit"] = unit
    warehouses = r.links.of("warehouse")
    if kind == "transfer":
        source, target = _route(r.text, warehouses)
        source = source or ctx.home_warehouse(mention.best.code, ctx.warehouses)
        if not target or not source or source == target:
            return Plan(reply=replies.said(r.zh, "from_where_to_where"))
        args["warehouse"], args["to_warehouse"] = source, target
    else:
        said_place = warehouses[0].code if warehouses else None
        args["warehouse"] = said_place or ctx.home_warehouse(mention.best.code, ctx.warehouses)
        if not args["warehouse"]:
            return Plan(reply=replies.said(r.zh, "which_warehouse"))
    args["reason"] = ("助手登记：" if r.zh else "Booked via assistant: ") + r.typed.strip()[:200]
    return Plan(tool, args)


def _sure_ofdirection(r: Reading) -> bool:
    unlikely, likely = sorted(dict(r.guess.ranked).get(BOOKINGS[way], 0.0) for way in ("inbound", "outbound"))
    return likely >= 0.65 and likely >= 4 * unlikely  # one way likely, and far likelier than the other


def _route(text: str, warehouses) -> tuple[str | None, str | None]:
    source = target = None
    for found in warehouses:
        before = text[max(0, found.span[0] - 8) : found.span[0]].lower()
        if re.search(rf"(?:{words.MOVED_FROM})\s*$", before, re.I):
            source = found.code
        elif re.search(rf"(?:{words.MOVED_TO})\s*(?:the\s+)?$", before, re.I):
            target = found.code
    if len(warehouses) >= 2 and (source is None or target is None):
        first, second = warehouses[0].code, warehouses[1].code
        source = source or (first if target != first else second)
        target = target or (second if source != second else first)
    elif len(warehouses) == 1 and source is None and target is None:
        target = warehouses[0].code
    return source, target


def _one_material_and_amount(
    r: Reading, which: str, how_much: str, ctx: Context
) -> tuple[Mention, amounts.Amount] | Plan:
    """The one material a write is about and how much of it, or the question to ask for what is
    missing: which material (`which`), which of several (their names), how much (`how_much`)."""
    mention = for_a_write(primary(r.links), r.text, lambda plain: primary(read(plain, ctx).links))
    if mention is None:
        return Plan(reply=replies.said(r.zh, which))
    if not mention.exact:
        return Plan(reply=replies.which_material(r, mention))
    amount = amounts.said(r, mention)
    if amount is None:
        return Plan(reply=replies.said(r.zh, how_much, **asdict(mention.best)))
    return mention, amount


def _purchase(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    if each := _each(tool, r, ctx):
        return each
    if re.search(words.QUOTE_TOLD, r.typed, re.I):
        return Plan(reply=replies.said(r.zh, "quote_told"))  # "…380元，要20箱起订": terms, not an order
    found = _one_material_and_amount(r, "which_to_buy", "how_much_to_buy", ctx)
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


# Which function fills in each tool's arguments from a reading.
_BUILDERS = {"search_materials": lookups.lookup, "get_inventory_stats": lookups.stats, "list_low_stock": lookups.stats,
             "get_stock_movements": _movements, "record_stock_movement": _booking, "create_purchase_request": _purchase,
             "create_new_intent": teaching.teach}  # fmt: skip
