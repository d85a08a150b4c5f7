"""A material's spec in English: "25kg/袋 蛋白质≥12.5%" -> "25 kg/bag, protein ≥12.5%".

The catalogue writes specs in the plant's shorthand: an amount and its pack ("25kg/袋",
"1kg×10包/箱"), then a note or two ("石磨", "冷藏"). The English form swaps each Chinese word for
its English one from the lists below (packs, then notes), word by word in the order written, and
spaces an amount from its unit. A word not in the lists stays as written: a spec is never guessed.
"""

from __future__ import annotations

import re

from inventory_ai.text import CJK_RUN

# Pack words: (one, several). After "/" a pack is one ("25 kg/bag"); after a count, several.
PACKS: dict[str, tuple[str, str]] = {
    "袋": ("bag", "bags"),
    "箱": ("case", "cases"),
    "桶": ("tub", "tubs"),
    "瓶": ("bottle", "bottles"),
    "罐": ("can", "cans"),
    "盒": ("box", "boxes"),
    "包": ("pack", "packs"),
    "卷": ("roll", "rolls"),
    "块": ("block", "blocks"),
    "条": ("bar", "bars"),
    "片": ("sheet", "sheets"),
    "张": ("sheet", "sheets"),
    "个": ("pc", "pcs"),
    "枚": ("piece", "pieces"),
    "根": ("stick", "sticks"),
    "粒装": ("pack", "per pack"),
    "寸": ("inch", "inch"),
}
# Notes on what it is, how it is kept, where it is from.
NOTES: dict[str, str] = {
    "蛋白质": "protein",
    "石磨": "stone-ground",
    "碱化": "alkalised",
    "精制": "refined",
    "防腐剂": "preservative",
    "冷藏": "chilled",
    "冷冻": "frozen",
    "宇治": "Uji",
    "新疆": "Xinjiang",
    "超细": "superfine",
    "烘焙用": "for baking",
    "起酥用": "for laminating",
    "巴氏杀菌": "pasteurised",
    "乳脂": "milk fat",
    "淀粉": "starch",
    "含": "with",
    "无铝": "aluminium-free",
    "洋槐蜜": "acacia honey",
    "特级初榨": "extra virgin",
    "马达加斯加": "Madagascar",
    "中号": "medium",
    "大号": "large",
    "小号": "small",
    "散装": "bulk",
    "约": "about",
}
_WORDS = sorted({*PACKS, *NOTES}, key=len, reverse=True)  # longest first: 粒装 before 装
_AMOUNT_UNIT = re.compile(r"(\d)(kg|g|mL|ml|L|cm|mm|cc)\b")
_COUNT_BEFORE = re.compile(r"(\d+(?:\.\d+)?)\s*$")


def english_spec(spec: str | None) -> str | None:
    if not spec:
        return spec
    parts = [_english_part(part) for part in spec.split()]
    return ", ".join(p for p in parts if p)


def _english_part(part: str) -> str:
    out = ""
    position = 0
    for run in CJK_RUN.finditer(part):
        out += part[position : run.start()]
        out = _glue(out, _english_run(run.group(), out))
        position = run.end()
        following = part[position : position + 1]
        if following.isalnum() or following in ("≤", "≥", "<", ">"):
            out += " "  # "含3%" -> "with 3%", "蛋白质≥12.5%" -> "protein ≥12.5%"
    out += part[position:]
    out = _AMOUNT_UNIT.sub(r"\1 \2", out)
    return out.replace("×", " × ").replace("  ", " ").strip()


def _english_run(run: str, before: str) -> str:
    """One run of Chinese characters, word by word (longest known word first)."""
    words: list[str] = []
    i = 0
    while i < len(run):
        word = next((w for w in _WORDS if run.startswith(w, i)), None)
        if word is None:  # not in the lists: kept as written
            words.append(run[i])
            i += 1
            continue
        if word in PACKS:
            one, several = PACKS[word]
            counted = not words and _COUNT_BEFORE.search(before)
            if word == "粒装":
                words.append("per pack" if counted else "pack")
            elif word == "寸":
                words.append("-inch" if counted else "inch")
            else:
                many = counted and _COUNT_BEFORE.search(before).group(1) not in ("1", "1.0")
                words.append(several if many else one)
        else:
            words.append(NOTES[word])
        i += len(word)
    return " ".join(words).replace(" -inch", "-inch")


def _glue(before: str, english: str) -> str:
    """Join what came before and an English word: no space after "/" or "≥", one after a figure."""
    if not before or before.endswith(("/", "×", " ", "(")):
        return before + english
    if english.startswith("-"):
        return before + english
    return before + " " + english
