"""How much of a material a request says, read against the material (a pack by its spec: "3袋" of a
25kg/袋 flour is 75 kg; an amount that cannot be the material's; a bare number to ask about; a
correction; two materials each with its amount); understanding.py decides what to do with them."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

from inventory_ai.assistant.providers.offline import slots as slot
from inventory_ai.assistant.providers.offline import words
from inventory_ai.assistant.providers.offline.linking import Mention
from inventory_ai.assistant.providers.offline.reading import Reading, direction, primary
from inventory_ai.errors import DomainError
from inventory_ai.services.units import convert, dimension, unit_or_pieces

Amount = tuple[Decimal, str | None]  # how much, in a unit (None: the material's own)
# The pack words a material's spec uses, and what people call them in English (offline_words.json).
PACK_WORDS = {pack: tuple(names) for pack, names in words.PACK_WORDS.items()}
_SPEC = re.compile(words.SPEC, re.I)  # 25kg/袋, 500g×12盒/箱 (offline_words.json)


def pack_size(spec: str | None, pack: str | None) -> tuple[Decimal, str] | None:
    """What one pack holds by the spec ('25kg/袋'; '500g×12盒/箱': a box 500 g, a case twelve), the
    pack matched by its word (袋, 'cases'); one size answers any word, two it does not tell: None."""
    said = (pack or "").lower()
    if not (m := _SPEC.search(spec or "")) or re.fullmatch(words.PALLET, said):
        return None  # what a pallet holds is never in a spec: said with it ("一托40袋") or asked
    size = Decimal(m.group("size"))
    unit = unit_or_pieces(m.group("unit"))
    levels = {m.group("outer"): size}
    if m.group("count"):
        levels = {m.group("inner"): size, m.group("outer"): size * int(m.group("count"))}
    if said.isascii():
        forms = {said, re.sub(r"(?:(?<=x)e)?s$", "", said)}  # cs, cases -> case, boxes -> box
        names = [(rank, zh) for zh, en in PACK_WORDS.items() for rank, name in enumerate(en) if name in forms]
        said = next((zh for _rank, zh in sorted(names) if zh in levels), "")
    if said in levels:
        return levels[said], unit
    if said and said == m.group("unit"):  # "1000包/箱" and 20包: twenty of the pieces, not cases
        return Decimal(1), unit
    return (size, unit) if len(levels) == 1 else None


def packs_by_spec(r: Reading) -> Reading:
    """A number before a word the material's spec counts in ("4条马苏里拉" of 2.5kg×4条/箱): that
    many of those packs. Words like 条 are no pack in general ("三条建议"), only where the spec says."""
    mention = primary(r.links)
    if mention is None or not mention.exact or not mention.best.spec:
        return r
    quantities = list(r.slots.quantities)
    for i, q in enumerate(quantities):
        after = r.text[q.span[1] : q.span[1] + 1]
        near = abs(q.span[0] - mention.span[1]) <= 8 or abs(mention.span[0] - q.span[1]) <= 8
        if r.text[q.span[1] + 1 : q.span[1] + 2] in words.LINES_COUNTED or not near:
            continue  # 2条线: two lines
        in_spec = re.search(rf"{re.escape(after)}\s*/|[×xX*]\s*\d+\s*{re.escape(after)}", mention.best.spec)
        if bare(q) and re.match(r"[\u4e00-\u9fff]", after) and in_spec:  # 条 of 2.5kg×4条/箱
            quantities[i] = replace(q, packs=q.amount, pack=after, span=(q.span[0], q.span[1] + 1))
    if quantities == list(r.slots.quantities):
        return r
    return replace(r, slots=replace(r.slots, quantities=quantities))


def said(r: Reading, mention: Mention | None) -> Amount | None:
    """The quantity to book: the first said that is no remark (只剩3袋: `remarked`), a second added when
    joined by "+", "and", 和 or 零 ("7 cases + 2 blocks", "7箱零5罐"); packs counted by the spec."""
    if not r.slots.quantities:
        return None
    first, *rest = [q for q in r.slots.quantities if not remarked(r.text, q)] or r.slots.quantities
    if rest and _one_of_a_kind(first, mention, r.text):  # "create 一个 purchase request, 松子仁 2箱"
        first, *rest = rest
    amount = one_amount(first, mention)
    if rest and rest[0].packs is not None and first.packs is None and mention and first.unit:
        packs = one_amount(rest[0], mention)  # "label says 25 kg, 2 sacks": a sack's size, then the count
        if packs and one_amount(replace(rest[0], amount=1, packs=Decimal(1)), mention) == amount:
            return packs
    if amount is None and rest:  # "a pallet of bread flour, 40 bags": the amount that can be counted
        return one_amount(rest[0], mention)
    if amount and rest and mention and not _fits(amount[1], mention):
        # "做五百个芝士蛋糕，奶油奶酪…申请10箱": 500 cakes are not the cheese's amount
        more = one_amount(rest[0], mention) if not bare(rest[0]) else None  # "for 3 batches": no amount
        if more and _fits(more[1], mention):
            return more
    if amount is None or not rest:
        return amount
    joined = r.text[first.span[1] : rest[0].span[0]]
    plus = re.fullmatch(rf"\s*(?:{words.AMOUNTS_JOINED})\s*", joined, re.I)  # "+", "and", 和
    zero = joined == "" and r.text[rest[0].span[0]] == "零"  # 三箱零五罐
    # "3 cases, 5 tins" of one material: one count in two packs
    other_pack = first.packs is not None and (rest[0].pack or rest[0].unit) != first.pack
    listed = re.fullmatch(r"\s*[,，]\s*", joined) and len(r.links.materials) == 1 and other_pack
    if mention is None or not (plus or zero or listed):
        return amount
    more, unit = one_amount(rest[0], mention), mention.best.unit
    try:
        total = convert(amount[0], amount[1], unit) + convert(more[0], more[1], unit)
    except (DomainError, TypeError):
        return amount
    return total, unit


_CORRECTED = re.compile(f"{words.CORRECTED}|{words.CORRECTED_SOFT}", re.I)  # 说错了, "no wait", 不好意思，是
_SOFT, _FILLER = re.compile(words.CORRECTED_SOFT, re.I), re.compile(words.RESTATED_FILLER, re.I)
_WAY = re.compile(f"{words.IN}|{words.OUT}", re.I)
_NOT_A_REPLACEMENT = re.compile(words.NOT_A_REPLACEMENT, re.I)  # 不是, 还剩, 记录, 再加, "also"
_REMARK_BEFORE = re.compile(f"(?:{words.AMOUNT_REMARKED_BEFORE})\\s*$", re.I)  # 只剩3袋, 少了2公斤
_REMARK_AFTER = re.compile(words.AMOUNT_REMARKED_AFTER, re.I)  # "3 bags left", "2 kg short"
_NOT_ORDERED_BEFORE = re.compile(words.BOOKING_NOT_ORDERED, re.I)  # 出库2袋吗, 先别出 (offline_words.json)
_EDGE = "[\\s，,。.!！:：-]"  # what stands between a correction's opening words and the rest
_OPENS = re.compile(f"^(?:{_EDGE}*(?:{words.CORRECTION_OPENS}))+{_EDGE}*", re.I)  # 不对，…; "oops, …"
_CLOSES = re.compile(f"(?:{_EDGE}+(?:刚才)?(?:{words.CORRECTION_OPENS}){_EDGE}*)+$", re.I)  # …，刚才看错了
_COUNT = re.compile(r"\s*(?:[\d.]+|[零一二两三四五六七八九十百千万半]+)")  # a count said first ("5 ctn")
_DENIAL = re.compile(rf"{_EDGE}*(?:\bnot\b|不是)\s*(?P<old>[^，,]+?){_EDGE}*$", re.I)  # "30 kg not 20"
_NAMED_AFTER = re.compile(r"\s*(?:是|换成|(?:it'?s|it is|i meant?|should be)\b)", re.I)  # 是淡奶油


def corrected(text: str, reading) -> str | None:
    """A booking corrected as it is said ("出库红糖2袋，啊说错了，是黑糖，2箱", "4 boxes - no wait, 3 boxes"):
    the words before the correction with the material, amount or direction it names in their place
    (`reading` reads a part); the text as typed if it names none; None when it is no plain replacement
    (several, negated, a remark on stock or records, an addition): to be asked about, never guessed."""
    marks = [m for m in _CORRECTED.finditer(text) if m.start() > 0]  # "sorry I mean": one, the last
    marks = [m for i, m in enumerate(marks) if i + 1 == len(marks) or marks[i + 1].start() > m.end()]
    if not marks or re.search(f"{words.TAMPER}|{words.STOCK_SET}", text, re.I):
        return text  # "把库存从30公斤更正为0": an order to tamper stays whole, to be refused
    before, after = text[: marks[-1].start()], text[marks[-1].end() :]
    (was, now), named = (reading(before), reading(after)), _WAY.search(after)
    said, old, way = [m for m in now.links.materials if m.exact], primary(was.links), _WAY.search(before)
    amounts, places, old_places = now.slots.quantities, now.links.of("warehouse"), was.links.of("warehouse")
    if was.slots.quantities and remarked(before, was.slots.quantities[-1]):
        return text  # "盘点少了2公斤，改成3公斤": the count in place of no amount
    soft = (m := _SOFT.match(text, marks[-1].start())) and m.end() == marks[-1].end()
    if soft and (said or amounts or named) and re.search(r"[?？吗呢]\s*$", after):
        return None  # "出库高筋面粉2袋，哦是3袋吗": asked, not said
    if not (said or amounts or named or places) or (soft and not _only_replacement(after, now)):
        return text  # "应该是够用", "抱歉，1箱是破的" put nothing in place of anything
    starts = [m.span[0] for m in [*said, *amounts, *places]] + [named.start() if named else 99]
    if len(marks) > 1 or _NOT_A_REPLACEMENT.search(after) or len(_FILLER.sub("", after[: min(starts)])) > 3:
        return None  # "不是10箱，是10盒，不对，是12盒", "更正：10公斤不是10箱", "还剩5公斤", "再加8公斤"
    edits = [(old.span, said[-1].text)] if said and old else []
    edits += [(old_places[-1].span, after[slice(*places[-1].span)])] if places and old_places else []
    if amounts and was.slots.quantities:  # a bare number in place of "5 ctn" is as many of the same
        new, was_said = after[slice(*amounts[-1].span)], before[slice(*was.slots.quantities[-1].span)]
        same = _COUNT.match(was_said) if bare(amounts[-1]) and not bare(was.slots.quantities[-1]) else None
        edits.append((was.slots.quantities[-1].span, new.strip() + was_said[same.end() :] if same else new))
    if named and way and direction(after) != direction(before):
        edits.append((way.span(), named.group(0)))
    for (start, end), words_said in sorted(edits, reverse=True):
        before = f"{before[:start]} {words_said} {before[end:]}"
    return before if edits else text  # "蛋白液不是20桶，是30桶": the marker held the old amount


def soft_correction_said(text: str) -> bool:
    """Whether a weaker correction (CORRECTED_SOFT: 不好意思，30袋…) is said after the message's start."""
    return any(m.start() > 0 for m in _SOFT.finditer(text))


def _only_replacement(after: str, now: Reading, whole: bool = False) -> bool:
    """Whether the words after a correction are nothing but what replaces (是 and a material, an
    amount, a direction; RESTATED_FILLER aside) in their first clause, or (`whole`) in all."""
    spans = [m.span for m in now.links.materials if m.exact] + [w.span() for w in _WAY.finditer(after)]
    spans += [p.span for p in now.links.of("warehouse")]  # "是冷库": the place corrected
    spans += [s for q in now.slots.quantities for s in (q.span, *q.more_spans)]
    left = slot.blank(after, spans).strip(" ，,：:")
    left = left if whole else re.split(r"[，,。；;！!？?]", left, maxsplit=1)[0]
    return bool(spans) and not _FILLER.sub("", left).strip()


def restated(text: str, before: str, reading) -> str | None:
    """The booking said just before (`before`) corrected by a message that is nothing but a correction
    (不好意思，是12箱; 抱歉，是出库; 不是炼乳，是淡奶油; "sorry, 12 boxes"; "oops, 30 kg not 20"). None when it
    says or asks anything else (不对，细砂糖放在哪; 不好意思，是12箱吗; 抱歉，1箱是破的), and when the turn
    before asked about a booking or put it off instead of ordering it (出库2袋吗, 要谁批准, 先别出)."""
    if _NOT_ORDERED_BEFORE.search(before):
        return None
    # What the message puts in place of the booking's words: what follows the marker it opens with
    # (不好意思，是12箱), else what stands between the words that open or close it (不对不对，是12公斤).
    rest = None
    for said in (f"，{text}", text):  # the marker at the start, read as if after a comma too
        if marker := _CORRECTED.match(said):
            rest = said[marker.end() :]
            break
    opened = _OPENS.match(text)
    closed = _CLOSES.search(text)  # "还是5桶，刚才看错了"
    plain = rest is not None and _only_replacement(rest, reading(rest), whole=True)
    if not plain and (opened or closed):
        rest = text[opened.end() if opened else 0 : closed.start() if closed else len(text)]
    if rest is None:
        return None
    # "pistachio kernels not cashews", "30 kg not 20": what the booking said, denied after what replaces it
    denial = _DENIAL.search(rest)
    denied = _denied(denial.group("old"), reading(before), reading) if denial else None
    if denied:
        rest = rest[: denial.start()]
    now = reading(rest)
    if not _only_replacement(rest, now, whole=True):
        return None
    # A material only after 是 (是淡奶油) or before "not" and the booked one, never beside a direction
    named_after = _NAMED_AFTER.match(rest) or denied == "material"
    if now.links.materials and (not named_after or _WAY.search(rest)):
        return None
    together = f"{before}，不对，{rest}"  # the booking and its correction, as if said in one message
    fixed = corrected(together, reading)
    return None if fixed in (None, together) else fixed


def _denied(old: str, was: Reading, reading) -> str | None:
    """What of the booking before (`was`) the words after "not" name: its "material", its "amount"."""
    booked = primary(was.links)
    if booked and old.lower() == booked.text.lower():
        return "material"
    said = reading(old).slots.quantities
    if len(said) == 1 and was.slots.quantities and said[0].amount == was.slots.quantities[-1].amount:
        return "amount"  # "not 20" of 20 kg
    return None


def each_booked(r: Reading) -> list[str] | None:
    """Two materials in one booking, each with its amount ("出库无盐黄油5公斤和高筋面粉10公斤"): the request
    for each, the other's name and amount (in the order said) blanked. None: one booking."""
    named, said = sorted(r.links.materials, key=lambda m: m.span), r.slots.quantities
    if len(named) != 2 or len(said) != 2 or named[0].best.code == named[1].best.code:
        return None
    if not all(m.exact for m in named):
        return None
    found = [one_amount(q, m) for q, m in zip(said, named, strict=True)]
    if not all(a is None or _fits(a[1], m) for a, m in zip(found, named, strict=True)):
        return None  # "2000 toast boxes … the 450g loaf": a weight that is no box's amount
    others = [[named[1 - i].span, said[1 - i].span, *said[1 - i].more_spans] for i in (0, 1)]
    return [slot.blank(r.text, spans) for spans in others]  # each with the other's name and amount blanked


def _fits(unit: str | None, mention: Mention) -> bool:
    """Whether an amount in `unit` (None: the material's own) can be the material's."""
    return unit is None or dimension(unit) == dimension(mention.best.unit)


def _one_of_a_kind(q: slot.Quantity, mention: Mention | None, text: str) -> bool:
    """ "一个", "a" before what is not the material (一个 PR, 一笔出库): one request, not one piece."""
    if q.amount != 1 or q.unit not in (None, "pcs") or q.packs is not None or mention is None:
        return False
    after = text[q.span[1] : mention.span[0]] if mention.span[0] >= q.span[1] else ""
    return bool(re.match(rf"\s*(?:new\s+)?(?:{words.ONE_REQUEST})", after, re.I))


def one_amount(q: slot.Quantity, mention: Mention | None) -> Amount | None:
    spec = (mention.best.spec or "") if mention else ""
    # The word the spec counts in (5片 of 1kg×10片/箱), or a piece of what the spec weighs by the piece
    # (12个 of eggs at 约60g/枚); never 两百个 cakes of a 25kg/桶 honey.
    by_piece = bool(q.word) and (q.word in spec or re.search(rf"/\s*[{''.join(words.PIECE_COUNTED)}]", spec))
    sheets = q.unit == "pcs" and mention is not None and dimension(mention.best.unit) != "count" and by_piece
    if sheets and (size := pack_size(mention.best.spec, q.word)):
        # 5片 of butter sheet (1kg×10片/箱): the spec's sheets, not pieces of something counted
        return q.amount * size[0], size[1]
    if q.packs is not None and mention is not None:
        if q.more_spans and not q.pack.isascii() and q.pack not in (mention.best.spec or ""):
            return None  # "20袋，每袋130块" of a 25kg/袋 flour: 130 is no count of blocks (a price?)
        size = pack_size(mention.best.spec, q.pack)
        if size is None:
            return None
        amount, unit = q.packs * size[0], size[1]
        if dimension(mention.best.unit) == "count" and dimension(unit) != "count":
            return q.packs, mention.best.unit  # 12罐 of a 600mL/罐 spray counted in pieces: 12 cans
        try:  # in the material's own unit where it converts: 6 cases of 500 g x 12 -> 36 kg
            return convert(amount, unit, mention.best.unit), mention.best.unit
        except DomainError:
            return amount, unit
    return q.amount, q.unit


def counted(r: Reading, mention: Mention) -> Amount | None:
    """A stocktake's count beside what the books say ("system says 36 kg but we only have 30"): the
    count, not the books' figure; "20 tubs … we only counted 18" is 18 tubs. None: no books said."""
    said = re.search(words.ON_THE_BOOKS, r.text, re.I)
    if said is None or len(r.slots.quantities) < 2:
        return None
    books = next((q for q in r.slots.quantities if q.span[0] >= said.end()), r.slots.quantities[0])
    count = next(q for q in reversed(r.slots.quantities) if q is not books)
    if bare(count) and books.packs is not None and count.amount <= 2 * books.packs:
        count = replace(count, packs=count.amount, pack=books.pack)
    return one_amount(count, mention)


def not_a_level(r: Reading, kind: str) -> str | None:
    """What to ask instead of booking: a stock figure set by hand, no count said ("把无盐黄油库存改成0"):
    'stock_set_by_hand'; an adjustment said only as a difference ("盘点少了2公斤"): 'count_not_said';
    goods said broken beside the amount ("入库炼乳10箱，1箱是破的"): 'damaged_beside'. None: book."""
    text, more, counted = r.text, len(r.slots.quantities) > 1, re.search(words.COUNT_SAID, r.text, re.I)
    if re.search(words.STOCK_SET, text, re.I) and not counted:
        return "stock_set_by_hand"
    if kind == "adjustment" and not (more or counted) and re.search(words.SHORTFALL, text, re.I):
        return "count_not_said"
    return "damaged_beside" if more and re.search(words.DAMAGED, text, re.I) else None


def remarked(text: str, q: slot.Quantity) -> bool:
    """A figure said as a remark beside the amount (只剩3袋, 少了2公斤, "below 20 kg", "3 bags left")."""
    return bool(_REMARK_BEFORE.search(text[: q.span[0]]) or _REMARK_AFTER.search(text[q.span[1] :]))


def bare(q: slot.Quantity) -> bool:
    return q.unit is None and q.packs is None and q.word is None


def bare_number(r: Reading, mention: Mention) -> tuple[str, str] | None:
    """The question when the only amount (remarks aside) is a bare number ("收到淡奶油10", "only 3 bags left,
    order 20") of a material that comes in packs: its own unit or packs? Never guessed for a write."""
    said = [q for q in r.slots.quantities if not remarked(r.text, q)]
    if len(said) != 1 or not bare(said[0]):
        return None
    if dimension(mention.best.unit) == "count":
        return None  # "issued 300 paper cups": pieces of what is counted in pieces
    spec_pack = re.search(r"/\s*([^\d\s/])", mention.best.spec or "")
    if not spec_pack or said[0].amount != int(said[0].amount):
        return None  # 12.5 of a flour: kilograms, never half a bag
    size = pack_size(mention.best.spec, spec_pack.group(1))
    if size and _fits(size[1], mention) and convert(size[0], size[1], mention.best.unit) == 1:
        return None  # a pack of 1 kg: either reading is the same amount
    n, unit, pack = number(said[0].amount), mention.best.unit, spec_pack.group(1)
    english = PACK_WORDS.get(pack, (pack,))[0]
    return (
        f"{mention.best.name_zh} {n} 是指 {n} {unit} 还是 {n} {pack}（{mention.best.spec}）？",
        f"{mention.best.name_en}: is that {n} {unit} or {n} {english}{'s' if n != 1 else ''} ({mention.best.spec})?",
    )


def number(value: Decimal):
    return int(value) if value == value.to_integral_value() else float(value)
