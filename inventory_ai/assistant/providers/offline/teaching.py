"""Admins teach the offline assistant in chat: the phrases of a new intent and the tool they mean,
parsed from the request ("新增意图：名称 shelf_life，关键词“保质期”，对应原料详情", "when someone says
stock worth, show the stats")."""

from __future__ import annotations

import hashlib
import re

from inventory_ai.assistant.providers.offline import replies, words
from inventory_ai.assistant.providers.offline.reading import Context, Plan, Reading, direction

_TOOL_WORDS = words.TOOL_WORDS  # which tool a lesson's words name (offline_words.json)
_READ = words.TEACHING  # a lesson's name, phrases and where its tool is said (offline_words.json)


def _first(patterns: list[str], text: str, found=re.search):
    return next((m for p in patterns if (m := found(p, text))), None)


def teach(tool: str, args: dict, r: Reading, ctx: Context) -> Plan:
    text = r.text
    name_match = _first(_READ["name"], text)
    phrases = _first(_READ["quoted"], text, re.findall) or []
    if not phrases and (m := re.search(_READ["listed"], text)):
        phrases = [p.strip() for p in re.split(_READ["listed_split"], m.group(1)) if p.strip()]
    if not phrases and (m := _first(_READ["said"], text)):  # a phrase said without quotes
        phrases = [m.group(1).strip(" '\"“”")]
    parts = re.split(_READ["means"], text, maxsplit=1)
    target = parts[1] if len(parts) > 1 else text
    target = re.sub(words.QUOTED, lambda m: " " * len(m.group(0)), target)  # the phrases
    named_tool = next(
        (t for t in sorted(ctx.who_can, key=len, reverse=True) if re.search(rf"\b{t}\b", text)), None
    )
    said = [(m.start(), -len(m.group(0)), t) for t, w in _TOOL_WORDS if (m := re.search(w, target, re.I))]
    tool_name = named_tool or (min(said)[2] if said else None)  # the first the request names, the longest
    if not phrases or tool_name is None:
        return Plan(reply=replies.said(r.zh, "teach_how"))
    digest = hashlib.sha1("|".join(phrases).encode()).hexdigest()[:8]
    name = name_match.group(1).lower() if name_match else f"taught_{digest}"
    args.update(name=name, keywords=phrases[:30], tool_name=tool_name)
    if tool_name == "record_stock_movement" and (kind := direction(target) or direction(" / ".join(phrases))):
        args["default_arguments"] = {"movement_type": kind}
    return Plan(tool, args)
