"""Numbers as staff type them: Arabic (1,150; 2.5), Chinese (二十, 两, 半, 一百五, 三点五) and English
words (fifty, a hundred)."""

from __future__ import annotations

import re
from decimal import Decimal

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000, "万": 10000}
CN_NUMBER = r"[零〇一壹二两贰三叁四五六七八九十拾百佰千仟万]+(?:点[零〇一二三四五六七八九]+)?"
DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 1,150 is a thousand and more; 2.5 a decimal
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
               "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
               "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
               "hundred": 100, "a hundred": 100, "one hundred": 100, "half": Decimal("0.5")}  # fmt: skip
_EN_NUMBER = "|".join(sorted(_EN_NUMBERS, key=len, reverse=True))
NUMBER = rf"(?:{DIGITS}|{CN_NUMBER}|半|(?:{_EN_NUMBER})\b)"


def cn_number(text: str) -> Decimal | None:
    """二十 -> 20, 两千 -> 2000, 一百五 -> 150, 三点五 -> 3.5, 半 -> 0.5."""
    if text == "半":
        return Decimal("0.5")
    if "点" in text:
        whole, _, fraction = text.partition("点")
        head = cn_number(whole)
        digits = "".join(str(_CN_DIGITS[ch]) for ch in fraction if ch in _CN_DIGITS)
        return None if head is None or not digits else Decimal(f"{head}.{digits}")
    total, section, number, last_unit = 0, 0, 0, 1
    for ch in text:
        if ch in _CN_DIGITS:
            number = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            if unit == 10000:
                total += (section + number) * unit
                section = 0
            else:
                section += (number or 1) * unit
            number, last_unit = 0, unit
        else:
            return None
    if number and last_unit >= 100 and text[-1] in _CN_DIGITS and len(text) >= 2 and text[-2] in _CN_UNITS:
        number *= last_unit // 10  # 一百五 = 150, 两千三 = 2300
    return Decimal(total + section + number)


def number(text: str) -> Decimal | None:
    if re.fullmatch(r"half an?", text.strip(), re.I):
        return Decimal("0.5")
    text = text.strip().lower()
    if re.fullmatch(DIGITS, text):
        return Decimal(text.replace(",", ""))
    if text in _EN_NUMBERS:
        return Decimal(_EN_NUMBERS[text])
    return cn_number(text)
