"""Admins teach the offline assistant in chat: the phrases of a new intent and the tool they mean,
parsed from the request ("新增意图：名称 shelf_life，关键词“保质期”，对应原料详情", "when someone says
stock worth, show the stats")."""

from __future__ import annotations

import hashlib
import re

from inventory_ai.assistant.providers.offline import replies, words
from inventory_ai.assistant.providers.offline.reading import Context, Plan, Reading, direction

_TOOL_WORDS = words.TOOL_WORDS  # which tool a lesson's words name (offline_words.json)
_SAID_PHRASE = (
    r"以后\S{0,3}说\s*(.{1,20}?)\s*(?:的时候|时)?\s*[，,]?\s*(?:就|都|便)",  # 以后有人说缺货清单就直接查低库存
    r"\bwhen (?:i|someone|people|staff|anyone) (?:says?|types?|writes?|asks?)\s+(.{1,40}?)\s*[,，]",
    r"\bthat\s+(.{1,30}?)\s+(?:means|is|=)\b",  # "teach it that 流水 means stock movements"
    r"[:：]\s*(\S{1,10}?)\s*(?:就是|意思是|是指)",  # 教它：缺料就是低库存
    r"(?:intent|意图|说法)\s*[:：]?\s*(.{1,50}?)\s*(?:should|means|=|→|->|route|就是|对应|走)",  # "SOH should route to…"
)


def teach(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    text = r.text
    name_match = re.search(
        r"(?:名称|名字|叫|named|called|name)\s*[:：]?\s*([A-Za-z][A-Za-z0-9_]{1,63})", text
    ) or re.search(
        r"\bintent\s+([a-z][a-z0-9]*_[a-z0-9_]{1,60})\b", text, re.I
    )  # "create intent stock_worth …"
    # Phrases in quotes: “…”, "…", 「…」 first; '…' only when nothing else is quoted, and an
    # apostrophe inside a word ("what's") never ends one.
    phrases = re.findall(r"[“\"「『]([^”\"」』]{1,50})[”\"」』]", text) or re.findall(
        r"(?<![A-Za-z])['‘]((?:[^'’]|(?<=[A-Za-z])['’](?=[A-Za-z])){1,50}?)['’](?![A-Za-z])", text
    )
    if not phrases:
        m = re.search(
            r"(?:关键词|关键字|说法|phrases?|keywords?)\s*[:：]?\s*(.+?)(?:[，,;；]\s*(?:对应|用于|指向|for|means|→)|$)",
            text,
            re.I,
        )
        if m:
            phrases = [p.strip() for p in re.split(r"[、,，/]|\band\b|和", m.group(1)) if p.strip()]
    for pattern in _SAID_PHRASE:  # a phrase said without quotes, in the words around it
        if not phrases and (m := re.search(pattern, text, re.I)):
            phrases = [m.group(1).strip(" '\"“”")]
    parts = re.split(
        r"对应|用于|指向|就是|意思是|都走|走|就去|就查|当成|当作|算作|means|for|→|->|route[sd]? (?:it )?to|go(?:es)? to|"
        r"\bmap(?:ped)? (?:\w+ ){0,3}?to\b|\bruns?\b|\bopens?\b|\bshould (?:go|run|open|trigger|show)\b",
        text,
        maxsplit=1,
    )
    target = parts[1] if len(parts) > 1 else text
    target = re.sub(words.QUOTED, lambda m: " " * len(m.group(0)), target)  # the phrases
    named_tool = next(
        (t for t in sorted(ctx.who_can, key=len, reverse=True) if re.search(rf"\b{t}\b", text)), None
    )
    said = [
        (m.start(), -len(m.group(0)), t) for t, words in _TOOL_WORDS if (m := re.search(words, target, re.I))
    ]
    tool_name = named_tool or (
        min(said)[2] if said else None
    )  # the first the request names, the longest there
    if not phrases or tool_name is None:
        return Plan(reply=replies.said(r.zh, "teach_how"))
    name = (
        name_match.group(1).lower()
        if name_match
        else "taught_" + hashlib.sha1("|".join(phrases).encode()).hexdigest()[:8]
    )
    args.update(name=name, keywords=phrases[:30], tool_name=tool_name)
    if tool_name == "record_stock_movement" and (kind := direction(target) or direction(" / ".join(phrases))):
        args["default_arguments"] = {"movement_type": kind}
    return Plan(tool, args)
