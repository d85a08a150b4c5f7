"""Numbers as staff type them: Arabic (1,150; 2.5), with a magnitude (2万, 1.2k), Chinese (二十, 两,
半, 一百五, 三千五, 三点五) and English words (fifty, a hundred)."""

from __future__ import annotations

import re
import warnings
from decimal import Decimal

from inventory_ai.assistant.providers.offline import words

with warnings.catch_warnings():  # its optional dependency's notice at import
    warnings.simplefilter("ignore")
    import cn2an

CN_NUMBER = r"[零〇一壹二两贰三叁四五六七八九十拾百佰千仟万]+(?:点[零〇一二三四五六七八九]+)?"
DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 1,150 is a thousand and more; 2.5 a decimal
_EN_NUMBERS = {said: Decimal(str(value)) for said, value in words.EN_NUMBERS.items()}  # offline_words.json
_EN_NUMBER = "|".join(sorted(_EN_NUMBERS, key=len, reverse=True))
# A magnitude after Arabic digits: 2万, 1w (chat's 万), 1.2k, 3千 (never 5kg or 2千克, a weight).
MAGNITUDE = r"万|[kKwW](?![a-zA-Z])|千(?!克)"
_MAGNITUDES = {"万": 10000, "w": 10000, "k": 1000, "千": 1000}
NUMBER = rf"(?:(?:{DIGITS})\s*(?:{MAGNITUDE})|{DIGITS}|{CN_NUMBER}|半|(?:{_EN_NUMBER})\b)"


def number(text: str) -> Decimal | None:
    """1,150 -> 1150, 1.2k -> 1200, fifty -> 50; 二十 -> 20, 两千 -> 2000, 一百五 -> 150, 三点五 -> 3.5,
    一万二 -> 12000, 2万 -> 20000, 半 -> 0.5 (cn2an reads the Chinese numerals and their magnitudes;
    docs/providers.md says why a library). None: no number."""
    text = re.sub(r"^half an?$", "half", text.strip().lower())
    if re.fullmatch(DIGITS, text):
        return Decimal(text.replace(",", ""))
    if m := re.fullmatch(rf"({DIGITS})\s*([万千kw])", text):
        return Decimal(m.group(1).replace(",", "")) * _MAGNITUDES[m.group(2)]
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if text == "半":
        return Decimal("0.5")
    try:
        return Decimal(str(cn2an.cn2an(text, "smart")))
    except (ValueError, KeyError, TypeError):
        return None
