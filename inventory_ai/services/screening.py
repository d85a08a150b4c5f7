"""Prompt-injection screening (the first, weakest layer): a signal, not the defence.

The defence is that a tool runs only if this user may use it, with schema-checked arguments, and
bookings wait for the user's own approval. Screening normalises the text (NFKC, Cyrillic and Greek
look-alikes to Latin, spacing) and looks for phrases that try to replace the assistant's instructions.
A flagged message is audited and answered with a reminder to the model to treat it as data. Tool
results are screened as their text decodes (screen_data), with a few more patterns for text in the
records that speaks to the assistant.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from inventory_ai.strict_json import strings

# Letters that look Latin but are not, as used to slip past word filters ("ignоre" with a Cyrillic о).
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
        "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "м": "m", "т": "t", "в": "b", "к": "k", "н": "h",
        "α": "a", "ο": "o", "ρ": "p", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "τ": "t", "υ": "u", "χ": "x",
    }
)  # fmt: skip
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060\ufeff]")
_SPACES = re.compile(r"[ \t]+")
_PATTERNS = [
    ("ignore_instructions", r"\b(ignore|disregard|forget|override)\b.{0,30}\b(previous|prior|above|earlier|all|your)\b.{0,20}\b(instructions?|rules?|prompts?|directions?)"),
    ("role_marker", r"(^|[\n.!?;。！？；])\s*(system|assistant|developer)\s*[:：]"),
    ("new_persona", r"\byou are now\b|\bact as (an? )?(admin|administrator|developer|system)\b|\bdeveloper mode\b|\bjailbreak"),
    ("reveal_prompt", r"\b(reveal|show|print|repeat)\b.{0,20}\b(system prompt|instructions|hidden prompt)"),
    ("ignore_instructions_zh", r"(忽略|无视|忘记|忘掉)(掉)?(之前|以上|前面|上面|所有|全部)?的?(所有|全部)?(指令|指示|规则|提示|设定)"),
    ("role_marker_zh", r"(系统提示|系统指令|你现在是|扮演管理员|开发者模式)|(^|[\n.!?;。！？；])\s*(系统|助手|开发者)\s*:"),
    # The chat template's own markers, typed into data to end it early and open a turn of its own.
    ("template_marker", r"<\|(im_start|im_end|endoftext)\|>|</?(tool_call|tool_response|tool_result|tool)>"),
]  # fmt: skip
# In records (a reason, a note), text written to the assistant is suspect; in the user's own message
# it is how people talk ("让助手执行…"), so these screen tool results only.
_DATA_PATTERNS = [
    ("addresses_assistant", r"\b(note|message|instructions?)\s+(to|for)\s+(the\s+)?(assistant|ai|model)\b"),
    ("addresses_assistant_zh", r"(请|让)?(助手|模型|ai)(立即|马上|务必|必须)?(执行|调用)"),
]  # fmt: skip
_COMPILED = [(name, re.compile(pattern, re.IGNORECASE | re.DOTALL)) for name, pattern in _PATTERNS]
_DATA_COMPILED = _COMPILED + [
    (name, re.compile(pattern, re.IGNORECASE | re.DOTALL)) for name, pattern in _DATA_PATTERNS
]


@dataclass(frozen=True)
class Screening:
    flagged: bool
    reasons: tuple[str, ...] = ()


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    text = _ZERO_WIDTH.sub("", text).translate(_LOOKALIKES).lower()
    return _SPACES.sub(" ", text)


def screen(text: str, patterns=_COMPILED) -> Screening:
    clean = normalise(text)
    reasons = tuple(name for name, pattern in patterns if pattern.search(clean))
    return Screening(bool(reasons), reasons)


def screen_data(value) -> Screening:
    """Screen what a tool returned, string by string as the text decodes (names, reasons, notes),
    keys included: never its JSON, where a newline is the two characters \\n and "…\\nSYSTEM: …"
    would not read as a line of its own."""
    reasons: list[str] = []
    for text in strings(value):
        for reason in screen(text, _DATA_COMPILED).reasons:
            if reason not in reasons:
                reasons.append(reason)
    return Screening(bool(reasons), tuple(reasons))
