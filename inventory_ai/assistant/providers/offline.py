"""The embedded offline provider: a useful assistant with no network and no API key.

It goes through the same loop as Qwen: it reads the user's words, routes them with the intents
table to one of the tools it was offered, extracts arguments (material names from Chinese text
without spaces, English phrases, codes, quantities with units, warehouses, periods), returns real
`tool_calls`, and writes the final answer from the tool results. It never calls a tool it was
not offered and never states a figure that no tool returned.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from inventory_ai.assistant.providers.offline_answers import compose_answer, help_text
from inventory_ai.assistant.types import (
    Message,
    ModelReply,
    ModelRequest,
    ProviderChunk,
    TextDelta,
    ToolCall,
)
from inventory_ai.errors import InvalidInput
from inventory_ai.services.units import canonical_unit


@dataclass(frozen=True)
class IntentRule:
    name: str
    keywords: tuple[str, ...]
    tool_name: str
    default_arguments: dict = field(default_factory=dict)
    priority: int = 0


@dataclass(frozen=True)
class Place:
    code: str
    name_zh: str
    name_en: str

    def names(self) -> list[str]:
        return [self.name_zh, self.name_en.lower(), self.code.lower()]


@dataclass(frozen=True)
class Lexicon:
    """What the provider knows of this warehouse, loaded per message (small tables only)."""

    intents: tuple[IntentRule, ...]
    warehouses: tuple[Place, ...]
    categories: tuple[Place, ...]
    # Where a material is usually booked: the warehouse holding most of it.
    home_warehouse: Callable[[str], str | None] = lambda _material: None
    # Whether a phrase finds any material: picks the real keyword among leftover words.
    known: Callable[[str], bool] = lambda _phrase: True


# Words that carry no material meaning; removed before the keyword is read off what remains.
ZH_FILLER = [
    "帮我",
    "帮忙",
    "请帮我",
    "请",
    "麻烦",
    "一下",
    "我要",
    "我想",
    "想要",
    "需要",
    "给我",
    "看看",
    "看一下",
    "查一下",
    "查看",
    "有没有",
    "还有",
    "还剩",
    "现在",
    "目前",
    "当前",
    "我们",
    "仓库里",
    "库里",
    "所有",
    "全部",
    "的",
    "了",
    "吗",
    "呢",
    "吧",
    "啊",
    "多少",
    "哪些",
    "什么",
    "怎么样",
    "情况",
    "原料",
    "材料",
    "物料",
    "库存",
    "一共",
    "共",
    "把",
    "从",
    "到",
    "在",
    "和",
    "及",
    "与",
    "是",
    "个",
    "些",
    "次",
    "用",
]
EN_FILLER = {
    "a",
    "an",
    "the",
    "please",
    "can",
    "could",
    "you",
    "me",
    "i",
    "we",
    "our",
    "us",
    "my",
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "what",
    "which",
    "how",
    "much",
    "many",
    "have",
    "has",
    "of",
    "for",
    "in",
    "on",
    "to",
    "from",
    "at",
    "with",
    "and",
    "or",
    "all",
    "any",
    "some",
    "show",
    "list",
    "give",
    "tell",
    "about",
    "get",
    "material",
    "materials",
    "stock",
    "stocks",
    "inventory",
    "level",
    "levels",
    "there",
    "left",
    "it",
    "out",
    "up",
    "now",
    "current",
    "currently",
    "today",
    "let",
    "see",
    "need",
    "want",
    "would",
    "like",
    "kg",
    "warehouse",
    "book",
    "booking",
    "items",
    "item",
    "raw",
    "ingredient",
    "ingredients",
    "details",
    "detail",
    "info",
    "information",
    "last",
    "past",
    "days",
    "day",
    "week",
    "month",
    "this",
    "recent",
    "by",
    "as",
}
# No \b: CJK characters are word characters, so "查看M002的" has no boundary around the code.
_CODE = re.compile(r"(?<![A-Za-z0-9])[mM]\d{3,}(?![0-9])")
_QTY = re.compile(
    r"(\d+(?:\.\d+)?)\s*(公斤|千克|kgs?|kilograms?|kilos?|克|grams?|g|斤|吨|tonnes?|tons?|t|毫升|ml|升|公升|"
    r"litres?|liters?|l|个|件|只|枚|张|根|片|pcs|pieces?|ea)?(?![a-z])",
    re.IGNORECASE,
)
_DAYS = [
    (re.compile(r"(?:最近|近|过去)\s*(\d+)\s*天|last\s+(\d+)\s+days?|past\s+(\d+)\s+days?", re.I), None),
    (re.compile(r"今天|today", re.I), 1),
    (re.compile(r"昨天|yesterday", re.I), 2),
    (re.compile(r"本周|这周|一周|this week|last week|past week", re.I), 7),
    (re.compile(r"本月|这个月|一个月|this month|last month|past month", re.I), 30),
    (re.compile(r"半年|six months|6 months|half a year", re.I), 183),
]
_DATE = re.compile(r"(?<!\d)(20\d\d-\d\d-\d\d)(?!\d)")
DATA_TOOLS = ("list_low_stock", "search_materials", "get_stock_movements", "get_inventory_stats")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def language_of(text: str) -> str:
    return "zh" if _CJK_RUN.search(text) else "en"


class OfflineProvider:
    name = "offline"
    model = "offline-intents-1"

    def __init__(self, lexicon: Lexicon):
        self.lexicon = lexicon

    def stream(self, request: ModelRequest) -> Iterator[ProviderChunk]:
        reply = self.reply(request)
        if reply.text:
            for piece in re.findall(r".{1,24}", reply.text, flags=re.S):
                yield TextDelta(piece)
        yield reply

    def reply(self, request: ModelRequest) -> ModelReply:
        messages = list(request.messages)
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        text = messages[last_user].content
        language = language_of(text)
        this_turn = messages[last_user + 1 :]
        offered = {t.name for t in request.tools}
        results = _results(this_turn)
        ranked = self.route(text, offered)

        if request.tools:
            follow = self._next_call(text, ranked, results, offered)
            if follow is not None:
                return ModelReply(tool_calls=(follow,), finish_reason="tool_calls")
        if not results:
            return ModelReply(text=help_text(language, offered), finish_reason="stop")
        return ModelReply(text=compose_answer(language, text, results), finish_reason="stop")

    # --- routing -----------------------------------------------------------------------------

    def route(self, text: str, offered: set[str]) -> list[tuple[IntentRule, dict]]:
        """Intents whose keywords occur in the text, best first, each with its extracted arguments."""
        lowered = text.lower()
        scored = []
        for intent in self.lexicon.intents:
            if intent.tool_name not in offered:
                continue
            hits = [k for k in intent.keywords if _contains(lowered, k.lower())]
            if not hits:
                continue
            arguments = self.arguments_for(intent, text, hits)
            if arguments is None:
                continue
            score = sum(len(h) for h in hits) * 10 + intent.priority
            scored.append((score, intent, arguments))
        scored.sort(key=lambda s: -s[0])
        return [(intent, args) for _, intent, args in scored]

    def arguments_for(self, intent: IntentRule, text: str, hits: list[str]) -> dict | None:
        """Arguments for the intent's tool, or None when the text lacks what the tool needs."""
        args = dict(intent.default_arguments)
        tool = intent.tool_name
        keyword = self.material_phrase(text, hits)
        warehouse = self.find_place(text, self.lexicon.warehouses)
        quantity, unit = _quantity(text)
        if tool == "search_materials":
            category = self.find_place(text, self.lexicon.categories)
            if not keyword and not category:
                return None
            args["keyword"] = keyword or category
            if warehouse:
                args["warehouse"] = warehouse
        elif tool == "get_material_detail":
            if not keyword:
                return None
            args["material"] = keyword
        elif tool in ("get_inventory_stats", "list_low_stock"):
            if warehouse:
                args["warehouse"] = warehouse
            if tool == "get_inventory_stats" and (category := self.find_place(text, self.lexicon.categories)):
                args["category"] = category
        elif tool == "get_stock_movements":
            if keyword:
                args["material"] = keyword
            if warehouse:
                args["warehouse"] = warehouse
            if (days := _days(text)) is not None:
                args["days"] = days
            if (kind := _movement_kind(text)) is not None:
                args.setdefault("movement_type", kind)
        elif tool == "record_stock_movement":
            if quantity is None or not keyword:
                return None  # "出库记录" is a question about history, not a booking
            args.update(material=keyword, quantity=quantity)
            if unit:
                args["unit"] = unit
            places = self.find_places(text, self.lexicon.warehouses)
            if args.get("movement_type") == "transfer":
                if len(places) < 2:
                    return None
                args["warehouse"], args["to_warehouse"] = places[0], places[1]
            else:
                args["warehouse"] = (
                    warehouse or self.lexicon.home_warehouse(keyword) or _first_name(self.lexicon)
                )
            lang = language_of(text)
            args["reason"] = ("助手登记：" if lang == "zh" else "Booked via assistant: ") + text.strip()[:200]
        elif tool == "create_purchase_request":
            if quantity is None or not keyword:
                return None
            args.update(material=keyword, quantity=quantity)
            if unit:
                args["unit"] = unit
            if match := _DATE.search(text):
                args["needed_by"] = match.group(1)
        elif tool == "create_new_intent":
            return None  # needs structured input; admins use the admin API or Qwen for this
        return args

    def _next_call(self, text, ranked, results, offered) -> ToolCall | None:
        called = {r["name"] for r in results}
        wants_report = any(i.tool_name == "format_report" for i, _ in ranked)
        if not results:
            for intent, args in ranked:
                if intent.tool_name == "format_report":
                    continue  # a report needs data first: the best data intent below
                return _call(intent.tool_name, args)
            if wants_report:  # a report of what? the material named, else what is running low
                keyword = self.material_phrase(text, [])
                if keyword and self.lexicon.known(keyword) and "search_materials" in offered:
                    return _call("search_materials", {"keyword": keyword})
                if "list_low_stock" in offered:
                    return _call("list_low_stock", {})
            return None
        last = results[-1]
        # A detail lookup that matched several materials: show them instead.
        if (
            last["name"] == "get_material_detail"
            and last["error"]
            and "search_materials" in offered
            and "search_materials" not in called
            and (keyword := self.material_phrase(text, []))
        ):
            return _call("search_materials", {"keyword": keyword})
        if (
            wants_report
            and "format_report" in offered
            and "format_report" not in called
            and not last["error"]
        ):
            rows = _rows_of(last["data"])
            if rows:
                return _call("format_report", {"title": text.strip()[:100], "rows": rows[:50]})
        return None

    # --- extraction --------------------------------------------------------------------------

    def material_phrase(self, text: str, hits: list[str]) -> str:
        """What is left of the text once intent words, places, quantities and filler are removed."""
        if match := _CODE.search(text):
            return match.group(0).upper()
        rest = _DATE.sub(" ", text)
        for pattern, _ in _DAYS:  # periods before quantities: "最近7天" is a period, not 7 of something
            rest = pattern.sub(" ", rest)
        rest = _QTY.sub(" ", rest)
        removable = [h for h in hits] + [i for intent in self.lexicon.intents for i in intent.keywords]
        removable += [n for p in self.lexicon.warehouses for n in p.names()]
        for word in sorted(set(removable), key=len, reverse=True):
            rest = re.sub(re.escape(word), " ", rest, flags=re.I) if _is_cjk(word) else _drop_word(rest, word)
        for word in sorted(ZH_FILLER, key=len, reverse=True):
            rest = rest.replace(word, " ")
        runs = sorted(_CJK_RUN.findall(rest), key=len, reverse=True)
        if runs:
            return next((r for r in runs if self.lexicon.known(r)), runs[0])
        words = [w for w in re.findall(r"[a-z][a-z'-]*", rest.lower()) if w not in EN_FILLER]
        for size in range(min(3, len(words)), 0, -1):  # the longest run of words that finds something
            for start in range(len(words) - size + 1):
                phrase = " ".join(words[start : start + size])
                if self.lexicon.known(phrase):
                    return phrase
        return " ".join(words[:3])

    def find_places(self, text: str, places: tuple[Place, ...]) -> list[str]:
        lowered = text.lower()
        found = []
        for place in places:
            positions = [lowered.find(n) for n in place.names() if n and _contains(lowered, n)]
            if positions:
                found.append((min(p for p in positions if p >= 0), place.name_zh))
        return [name for _, name in sorted(found)]

    def find_place(self, text: str, places: tuple[Place, ...]) -> str | None:
        found = self.find_places(text, places)
        return found[0] if found else None


def _call(name: str, arguments: dict) -> ToolCall:
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(arguments, ensure_ascii=False))


def _is_cjk(word: str) -> bool:
    return bool(_CJK_RUN.search(word))


def _contains(text: str, keyword: str) -> bool:
    """CJK: a substring. English: whole words, and a two-word phrase may be split by a few words
    ("book 20 kg of flour out" contains "book out")."""
    if _is_cjk(keyword):
        return keyword in text
    words = keyword.split()
    if len(words) == 2:
        pattern = rf"(?<![a-z]){re.escape(words[0])}(?:\W+[\w.]+){{0,5}}?\W+{re.escape(words[1])}(?![a-z])"
    else:
        pattern = r"(?<![a-z])" + re.escape(keyword) + r"(?![a-z])"
    return re.search(pattern, text) is not None


def _drop_word(text: str, word: str) -> str:
    return re.sub(r"(?<![a-z])" + re.escape(word) + r"(?![a-z])", " ", text, flags=re.I)


def _quantity(text: str) -> tuple[float | None, str | None]:
    for match in _QTY.finditer(text):
        number, unit = match.group(1), match.group(2)
        if _CODE.search(text[max(0, match.start() - 1) : match.end()]):
            continue  # the digits of a material code
        if unit is None and not re.search(
            r"(出库|入库|领|book|issue|receive|采购|order|buy|调|transfer)", text, re.I
        ):
            continue
        value = float(number)
        return (int(value) if value.is_integer() else value), _unit(unit)
    return None, None


def _unit(raw: str | None) -> str | None:
    """The unit as the ledger names it (its alias table is the only one), or as typed if unknown."""
    if raw is None:
        return None
    try:
        return canonical_unit(raw)
    except InvalidInput:
        return raw


def _days(text: str) -> int | None:
    for pattern, days in _DAYS:
        if match := pattern.search(text):
            if days is None:
                return min(366, int(next(g for g in match.groups() if g)))
            return days
    return None


def _movement_kind(text: str) -> str | None:
    lowered = text.lower()
    for words, kind in (
        (("出库", "领料", "outbound", "issued", "book out"), "outbound"),
        (("入库", "到货", "收货", "inbound", "received", "deliveries"), "inbound"),
        (("调拨", "transfer"), "transfer"),
        (("盘点", "调整", "adjust"), "adjustment"),
    ):
        if any(w in lowered for w in words):
            return kind
    return None


def _first_name(lexicon: Lexicon) -> str:
    return lexicon.warehouses[0].name_zh if lexicon.warehouses else ""


def _results(turn: list[Message]) -> list[dict]:
    """This turn's tool results with their calls: [{name, arguments, data, error}] in order."""
    calls = {c.id: c for m in turn if m.role == "assistant" for c in m.tool_calls}
    out = []
    for m in turn:
        if m.role != "tool":
            continue
        call = calls.get(m.tool_call_id or "")
        try:
            data = json.loads(m.content)
        except (json.JSONDecodeError, TypeError):
            data = {"error": {"type": "Unreadable", "message": m.content[:200]}}
        error = data.get("error") if isinstance(data, dict) else None
        arguments = {}
        if call is not None:
            try:
                arguments = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                arguments = {}
        out.append(
            {
                "name": m.name or (call.name if call else ""),
                "arguments": arguments,
                "data": data,
                "error": error,
            }
        )
    return out


def _rows_of(data) -> list[dict]:
    if not isinstance(data, dict):
        return []
    for key in ("items", "materials", "movements", "by_category", "by_warehouse"):
        rows = data.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            return [{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in rows]
    return []
