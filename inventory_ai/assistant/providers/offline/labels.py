"""How a request asks, decided: the classifier's label (classifier.py) read again with what else the
request says. Small talk that names a material is about the stock; teaching words that teach nothing
are not teaching; an event asked about is the history, an amount told with it a booking; goods still
to come are bought. understanding.py turns the label into a call.
"""

from __future__ import annotations

import re

from inventory_ai.assistant.providers.offline import replies, tagger, words
from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline.classifier import CHITCHAT, DESTRUCTIVE
from inventory_ai.assistant.providers.offline.reading import Context, Plan, Reading, direction

CONFIDENT = 0.30  # below this, and with nothing named, the request is asked about, not guessed
BOOKINGS = {"inbound": "book_in", "outbound": "book_out", "transfer": "transfer", "adjustment": "stocktake"}
DATA_LABELS = ("lookup", "stats", "low_stock", "movements")  # the labels that read data


def _said(pattern: str, text: str) -> bool:
    return bool(re.search(pattern, text, re.I))


def label_of(text: str, r: Reading, ctx: Context) -> str | Plan:
    """The label a request is acted on as, or the reply when it is small talk or too vague."""
    named = bool(r.links.materials or r.links.places or r.slots.codes)
    label = _second_thought(text, r, ctx, named)
    said = _said_plainly(label, text, r, named)
    if said is None and label == CHITCHAT and not r.slots.quantities:
        return Plan(reply=replies.said(r.zh, "small_talk"))
    if said is None and (label in (CHITCHAT, DESTRUCTIVE) or (r.guess.confidence < CONFIDENT and not named)):
        return Plan(reply=replies.which_one(r, ctx))
    return _still_to_come(said or label, text, r)


def _second_thought(text: str, r: Reading, ctx: Context, named: bool) -> str:
    """The classifier's label, unless it is small talk about the stock or destruction by mistake."""
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
    named_plainly = any(m.named for m in r.links.materials) or r.links.places or r.slots.codes
    little_else = len(re.findall(words.WORD, r.masked.lower())) <= 6  # "hi, butter?"
    unsure = r.guess.confidence < 0.6
    about_stock = named and not by_building_only and (unsure or named_plainly or little_else)
    if label == DESTRUCTIVE or (label == CHITCHAT and about_stock):
        label = next(
            lbl for lbl, _p in r.guess.ranked if lbl != DESTRUCTIVE and (lbl != CHITCHAT or not about_stock)
        )
    return label


def _said_plainly(label: str, text: str, r: Reading, named: bool) -> str | None:
    """A label the request's own words settle, whatever the classifier thought; None: none does."""
    taught = _said(words.TEACH, text) or (label == "teach" and r.guess.confidence >= CONFIDENT)
    if taught and not not_teaching(text, r):
        return "teach"
    if taught and label == "teach":  # teaching words the message does not mean: how else it reads
        return next(lbl for lbl, _p in r.guess.ranked if lbl not in ("teach", CHITCHAT, DESTRUCTIVE))
    # A request with its amount, no direction and nothing issued ("Kitchen request: 2 bags, issue from
    # main" is a booking), or the purchase request's own names: no other reading of them.
    requested = _said(words.REQUESTING, text) and r.slots.quantities and not _said(words.ISSUED, text)
    if r.links.materials and (_said(words.PURCHASE_REQUEST, text) or (requested and not direction(text))):
        return "purchase"
    level_asked = _said(words.REORDER_LEVEL, text) and not _said(words.BELOW, text) and asks(text)
    if r.links.materials and not r.slots.quantities and level_asked:
        return "lookup"  # "what's the reorder level for…": a figure of the material's detail
    if named and re.sub(words.ONLY_NAMES_FILLER, "", r.masked.lower()) == "":
        return "lookup"  # nothing said but names
    if label not in (CHITCHAT, DESTRUCTIVE) and not r.slots.quantities and _event_asked(text, r, named):
        return "movements"  # "谁收的", "did the butter come in today?", "transfers last week": events
    if r.slots.period and r.links.materials and not r.slots.quantities and _said(words.ACTIVITY, text):
        return "movements"  # "what's been happening with the fresh yeast over the past 5 days"
    if not r.links.materials and _said(words.WHAT_TO_BUY, text):
        return "low_stock"  # "我该买点啥", "what should we order?": what is running low
    return None


def _event_asked(text: str, r: Reading, named: bool) -> bool:
    return bool(
        direction(text)
        and (_said(words.EVENT_ASKED, text) or (r.slots.period and not named))
        and not _said(words.NOT_AN_EVENT, text)
    )


def _still_to_come(label: str, text: str, r: Reading) -> str:
    """Goods still to come are bought, goods moved are booked, an amount to order is a purchase
    (each reading the label the one before left)."""
    future = _said(words.ON_ARRIVAL + "|" + words.FUTURE, text)
    buy = _said(words.BUY, text)
    if label in BOOKINGS.values() and ((buy and (future or r.slots.due)) or (r.slots.due and future)):
        label = "purchase"  # "申请淡奶油20箱，到货后搬到冷库", "500个月饼盒，明年七月底前到货": still to come
    if label in DATA_LABELS and r.slots.quantities and (f := tagger.booking(r)):
        label = BOOKINGS[f.way]  # "冷库入淡奶油十箱", "面包袋 入 三千五": a read guessed, a booking told
    said = direction(text)
    if label == "purchase" and not r.slots.due and said and not buy and not _said(words.ON_ARRIVAL, text):
        label = BOOKINGS[said]  # "move some cream cheese over", "incoming: mango puree x4": nothing is bought
    amount_of_a_material = r.slots.quantities and r.links.materials
    if label in ("lookup", "stats", "low_stock") and amount_of_a_material and _said(words.ORDER_VERB, text):
        label = "purchase"  # "we need 50 cases of bread bags ordered": an amount to buy
    elif label == "lookup" and _said(words.BELOW, text) and _said(words.LOW_WORDS, text):
        label = "low_stock"  # "are any of the egg products below their reorder point?"
    return label


def told_or_asked(label: str, text: str, r: Reading) -> str:
    """A movement told with its amount is a booking; asked about, or its records, it is the history."""
    if (
        label == "stats"
        and not r.links.places
        and _said(words.KINDS, text)
        and not _said(words.FIGURES, text)
    ):
        label = "lookup"  # "看看各种油的库存": the oils, not the warehouse's figures
    amount_of_a_material = r.slots.quantities and r.links.materials
    returned = amount_of_a_material and _said(words.RETURNED, text) and not _said(words.QUESTION, text)
    if returned and label not in ("teach", "purchase"):
        label = "book_in"  # goods brought back to stock are booked in, whenever they were taken
    asked = asks(text) or _said(words.RECORDS, text)
    told = amount_of_a_material and not asked
    if label == "movements" and told and (way := direction(text)) in ("inbound", "outbound"):
        label = BOOKINGS[way]  # "今天 whole milk 用了 2 cases": what happened told with its amount
    when = _said(words.EVENT_ASKED, text) and not _said(words.BOOKING_ORDERED, text)  # 是几点入的, "did we…?"
    if label in BOOKINGS.values() and (when or not r.slots.quantities) and asked:
        return "movements"  # asked about, not told, or their records: what happened is history
    if label in ("lookup", "stats") and r.links.materials and _said(words.RECORD_NOUNS, text):
        return "movements"  # "can you check the mascarpone transfers"
    if label in ("lookup", "stats") and r.links.materials and not r.slots.period and (act := _acted(text)):
        # A movement verb with a material ("调拨一下淡奶油"): asked about, its history; told, a
        # booking, which asks for what it lacks.
        return "movements" if asks(text) else BOOKINGS[act]
    went = direction(text) and not _said(words.NOT_AN_EVENT, text)
    if label in ("low_stock", "lookup", "stats") and r.slots.period and not r.slots.quantities and went:
        return "movements"  # something that went in or out at a time: an event
    return label


def not_teaching(text: str, r: Reading) -> bool:
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
    return bool(outside) or _said(words.ASKED_ABOUT_A_SAYING, unquoted)


def asks(text: str) -> bool:
    """A question, not a request put politely: "can you move some cream cheese over?" asks for a
    booking (and is asked how much), "who moved the cream cheese?" asks what happened."""
    if _said(words.POLITE_ASK, text):
        if _said(words.CHECKING, text):
            return True  # "can you check the mascarpone transfers", 帮我查一下…调拨过没有
        text = re.sub(words.POLITE_ASK, " ", text, flags=re.I).replace("?", " ").replace("？", " ")
    return _said(words.QUESTION, text)


def _acted(text: str) -> str | None:
    """The movement a request tells to make, by its verb (出库, 调拨, stocktake…), if any."""
    if _said(words.BOTH_WAYS, text):
        return None  # both ways: the records, not a movement to make
    for verbs, kind in ((words.ACTS_TRANSFER, "transfer"), (words.ACTS_ADJUST, "adjustment"), (words.ACTS_OUT, "outbound"),
                        (words.ACTS_IN, "inbound")):  # fmt: skip
        if _said(verbs, text):
            return kind
    return None
