"""What a pack holds, read from a material's spec ('25kg/袋', '500g×12盒/箱', '1000包/箱') and the
word someone used for it (袋, "cases", "boxes"), so "3袋" of flour is booked as 75 kg."""

from __future__ import annotations

import re
from decimal import Decimal

from inventory_ai.assistant.providers.offline import words

# The pack words a material's spec uses, and what people call them in English (offline_words.json).
PACK_WORDS = {pack: tuple(names) for pack, names in words.PACK_WORDS.items()}
_SPEC_UNITS = {"kg": "kg", "公斤": "kg", "g": "g", "克": "g", "l": "L", "升": "L", "ml": "mL", "毫升": "mL"}
_SPEC = re.compile(
    r"(?P<size>\d+(?:\.\d+)?)\s*(?P<unit>kg|公斤|g|克|ml|毫升|l|升|个|枚|根|张|片|粒|pcs|包|袋|盒)(?=\s*[×xX*/])"
    r"(?:\s*[×xX*]\s*(?P<count>\d+)\s*(?P<inner>[^\d\s/])\s*)?/\s*(?P<outer>[^\d\s/])",
    re.I,
)


def pack_size(spec: str | None, pack: str | None) -> tuple[Decimal, str] | None:
    """What one pack holds, from the material's spec: '25kg/袋' (a bag is 25 kg), '500g×12盒/箱'
    (a box is 500 g, a case twelve of them), '50根/包' (a pack is 50 pieces). The pack said is
    matched by its word (袋, 'cases', 'boxes'); a spec with a single pack size answers any pack
    word, two sizes that the word does not tell apart are not guessed (None)."""
    if re.fullmatch(r"托|pallets?", (pack or "").lower()):
        return None  # what a pallet holds is never in a spec: said with it ("一托40袋") or asked
    m = _SPEC.search(spec or "")
    if not m:
        return None
    size = Decimal(m.group("size"))
    unit = _SPEC_UNITS.get(m.group("unit").lower(), "pcs")
    levels = {m.group("outer"): size}
    if m.group("count"):
        levels = {m.group("inner"): size, m.group("outer"): size * int(m.group("count"))}
    said = (pack or "").lower()
    if said.isascii():
        words = {said, re.sub(r"(?:(?<=x)e)?s$", "", said)}  # cs, cases -> case, boxes -> box
        names = sorted(
            (rank, chinese) for chinese, english in PACK_WORDS.items()
            for rank, name in enumerate(english) if name in words
        )  # fmt: skip
        said = next((chinese for _rank, chinese in names if chinese in levels), "")
    if said in levels:
        return levels[said], unit
    if said and said == m.group("unit"):  # "1000包/箱" and 20包: twenty of the pieces, not cases
        return Decimal(1), unit
    return (size, unit) if len(levels) == 1 else None
