"""The offline assistant's evaluation: does an answer call the right tool with the right arguments,
judged by meaning, not spelling?

Each case (tests/evaluation/*.jsonl) is a request as someone typed it, their role, and what a careful
person would do: the first tool and its key arguments, or no tool with an outcome (clarify,
role_refused, off_topic, refused), and optionally a tool that formats the rows (`then`) or a second
call that must come later with its own arguments (`also`: {"tool", "args"}); a write the case does not
name (a booking, a purchase request, a taught intent) fails it wherever it comes. `context` lists what the
same user typed before in the same conversation: each runs through the loop first, in one
conversation, and `text` is judged. An answer is produced by the real loop (manager.run with the
offline provider, the role's real toolbox, the seeded database). Arguments are compared by what they
mean: a material by the code it resolves to; a search keyword by whether the search finds the
expected materials; quantities in the material's unit; periods (a label, or `since`/`until` as ISO
dates) as the dates they cover; a due date as a date; warehouses and categories by code. A booking
an earlier message proposed is rejected before the next one, as the page has its requester decide first.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.errors import DomainError
from inventory_ai.models import ChatMessage, MessageStatus, User
from inventory_ai.services import clock
from inventory_ai.services.catalog import find_category, find_material
from inventory_ai.services.search import SearchFilters, search_materials
from inventory_ai.services.sites import find_warehouse
from inventory_ai.services.units import convert

EVALUATION = Path(__file__).resolve().parent.parent / "evaluation"
NO_TOOL = "(no tool)"


def load(name: str) -> list[dict]:
    """A split of tests/evaluation by name, or any .jsonl file of cases by its path."""
    path = Path(name) if name.endswith(".jsonl") else EVALUATION / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class Result:
    case: dict
    got_tool: str
    ok: bool
    why: str = ""
    calls: list = field(default_factory=list)
    reply: str = ""


def period_dates(label: str, today: date) -> tuple[date, date]:
    """The local dates a period label covers, [first, last]."""
    if label == "today":
        return today, today
    if label == "yesterday":
        return today - timedelta(days=1), today - timedelta(days=1)
    if label == "this_week":
        return today - timedelta(days=today.weekday()), today
    if label == "last_week":
        start = today - timedelta(days=today.weekday() + 7)
        return start, start + timedelta(days=6)
    if label == "this_month":
        return today.replace(day=1), today
    if label == "last_month":
        last = today.replace(day=1) - timedelta(days=1)
        return last.replace(day=1), last
    if label.startswith("last_") and label.endswith("_days"):
        n = int(label.split("_")[1])
        return today - timedelta(days=n - 1), today
    raise ValueError(label)


def _day(value) -> date | None:
    """A date given as an ISO date or date-time ("2026-09-01", "2026-09-01T00:00:00"); None if not one."""
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def call_dates(arguments: dict, today: date) -> tuple[date | None, date] | None:
    """The dates a call covers, [first, last]: an open "since" runs to today."""
    if "since" in arguments or "until" in arguments:
        return _day(arguments.get("since")), _day(arguments.get("until")) or today
    if "days" in arguments:
        return today - timedelta(days=int(arguments["days"]) - 1), today
    return None


def _resolves(session, finder, ref, code) -> bool:
    try:
        return finder(session, str(ref)).code == code
    except DomainError:
        return False


class _Checking:
    """One expected call's arguments, checked key by key (`check_arguments`)."""

    def __init__(self, session, arguments: dict, today: date, expected: dict | None = None):
        self.session, self.arguments, self.today = session, arguments, today
        self.expected = expected or {}
        self.material = None  # the material the call names, once found

    def material_(self, key: str, value, got) -> str:
        try:
            self.material = find_material(self.session, str(got))
        except DomainError as exc:
            return f"material {got!r}: {exc.message}"
        return "" if self.material.code == value else f"material {got!r} is {self.material.code}, not {value}"

    def keyword_finds(self, key: str, value, got) -> str:
        keyword = self.arguments.get("keyword") or ""
        page = search_materials(self.session, keyword, SearchFilters(), limit=200)
        found = {m.code for m in page.materials}
        return (
            ""
            if set(value) <= found
            else f"keyword {keyword!r} finds {sorted(found)[:8]}, not all of {value}"
        )

    def warehouse(self, key: str, value, got) -> str:
        if got is None or not _resolves(self.session, find_warehouse, got, value):
            return f"{key} {got!r} is not {value}"
        return ""

    def category(self, key: str, value, got) -> str:
        if got is not None and _resolves(self.session, find_category, got, value):
            return ""
        # A category searched by its name finds its materials: as good as the filter.
        keyword = self.arguments.get("keyword")
        category = find_category(self.session, value)
        if (
            keyword
            and search_materials(self.session, keyword, SearchFilters(category_id=category.id), limit=1).total
        ):
            full = search_materials(self.session, keyword, limit=200)
            if all(m.category_id == category.id for m in full.materials):
                return ""
        return f"category {got!r} / keyword {keyword!r} is not {value}"

    def quantity(self, key: str, value, got) -> str:
        if self.material is None and "material" in self.arguments:
            try:
                self.material = find_material(self.session, str(self.arguments["material"]))
            except DomainError as exc:
                return f"material: {exc.message}"
        unit = self.arguments.get("unit")
        try:
            amount = convert(Decimal(str(got)), unit, self.material.unit)
        except (DomainError, ArithmeticError, AttributeError, ValueError) as exc:
            return f"quantity {got!r} {unit!r}: {exc}"
        return "" if amount == Decimal(str(value)) else f"quantity {got} {unit} is {amount}, not {value}"

    def period(self, key: str, value, got) -> str:
        want = period_dates(value, self.today)
        have = call_dates(self.arguments, self.today)
        return "" if have == want else f"period {have} is not {value} {want}"

    def dates(self, key: str, value, got) -> str:
        """`since` and `until` as the dates the call covers: an open "since" is the same whether its
        end is left out or today; `until` alone is checked only when no `since` is expected."""
        if key == "until" and "since" in self.expected:
            return ""
        want_since = _day(self.expected.get("since"))
        want = (want_since, _day(self.expected.get("until")) or self.today)
        have = call_dates(self.arguments, self.today)
        if have is None:
            return f"no dates, expected {want}"
        if key == "until":
            return "" if have[1] == want[1] else f"until {have[1]} is not {want[1]}"
        return "" if have == want else f"dates {have} are not {want}"

    def due(self, key: str, value, got) -> str:
        return "" if _day(got) == _day(value) else f"{key} {got!r} is not {value}"

    def keywords_include(self, key: str, value, got) -> str:
        keywords = [k.lower() for k in self.arguments.get("keywords", [])]
        return (
            ""
            if all(any(v.lower() in k for k in keywords) for v in value)
            else f"keywords {keywords} lack {value}"
        )

    def tool_name(self, key: str, value, got) -> str:
        return "" if got == value else f"tool_name {got!r} is not {value}"

    def plain(self, key: str, value, got) -> str:
        if isinstance(value, str) and isinstance(got, str):
            return "" if got.lower() == value.lower() else f"{key} {got!r} is not {value!r}"
        return "" if got == value else f"{key} {got!r} is not {value!r}"

    def check(self, key: str, value) -> str:
        special = {
            "material": self.material_, "keyword_finds": self.keyword_finds, "warehouse": self.warehouse,
            "to_warehouse": self.warehouse, "category": self.category, "quantity": self.quantity,
            "period": self.period, "keywords_include": self.keywords_include, "tool_name": self.tool_name,
            "since": self.dates, "until": self.dates, "needed_by": self.due,
        }  # fmt: skip
        return special.get(key, self.plain)(key, value, self.arguments.get(key))


def check_arguments(session, expected: dict, arguments: dict, today: date) -> str:
    """'' when the arguments mean what was expected, else why not."""
    checking = _Checking(session, arguments, today, expected)
    for key, value in expected.items():
        why = checking.check(key, value)
        if why:
            return why
    return ""


def check_outcome(outcome: str, calls: list, reply: str) -> str:
    denied = calls and calls[0]["error_type"] == "PermissionDenied"
    if outcome == "role_refused" and denied:
        return ""
    if calls:
        return f"called {calls[0]['name']} instead of answering ({outcome})"
    if outcome == "clarify" and not any(mark in reply for mark in ("?", "？")):
        return "no question asked"
    if outcome == "role_refused" and not any(
        w in reply.lower() for w in ("role", "角色", "manager", "主管", "管理员", "admin", "采购员")
    ):
        return "does not say the role is why"
    if not reply.strip():
        return "no answer"
    return ""


def evaluate(session, cases: list[dict], today: date | None = None) -> list[Result]:
    """Run every case through the real loop as its role; judge the first call (and `then`)."""
    today = today or clock.today()
    users = {
        u.role: u
        for u in session.query(User).filter(User.username.in_(["staff", "manager", "purchaser", "admin"]))
    }
    results = []
    for case in cases:
        user = users[case["role"]]
        conversation = None
        for earlier in case.get("context", []):  # what the same user said before, in one conversation
            said = _answered(session, user, earlier, conversation)
            conversation = said.conversation_id
            _decline_waiting(session, user, said.message_id)
        turn = _answered(session, user, case["text"], conversation)
        message = session.get(ChatMessage, turn.message_id)
        calls = [
            {
                "name": c.name,
                "arguments": _arguments(c.arguments),
                "status": c.status,
                "error_type": c.error_type,
            }
            for r in message.rounds
            for c in r.calls
        ]
        got = calls[0]["name"] if calls else NO_TOOL
        reply = message.content or ""
        if case["tool"] is None:
            why = check_outcome(case.get("outcome", ""), calls, reply)
        elif got == "get_material_detail" and case["tool"] == "search_materials" and _one_found(case):
            # "Names a material and nothing else: a search, or the detail when it names exactly one."
            why = check_arguments(
                session, {"material": case["args"]["keyword_finds"][0]}, calls[0]["arguments"], today
            )
        elif got != case["tool"]:
            why = f"called {got}, expected {case['tool']}"
        else:
            why = check_arguments(session, case["args"], calls[0]["arguments"], today)
            if not why and case.get("then") and case["then"] not in [c["name"] for c in calls[1:]]:
                rows = _has_rows(message.rounds[0].calls[0].content)
                why = f"never called {case['then']}" if rows else ""  # nothing to put in a report
        if not why and case["tool"] is not None and case.get("also"):
            why = check_also(session, case["also"], calls[1:], today)
        if not why:
            why = unasked_write(case, calls)
        results.append(Result(case, got, not why, why, calls, reply))
        session.rollback()
    return results


def _answered(session, user, text: str, conversation: str | None):
    """One message through the real loop, in `conversation` (None: a new one)."""
    turn = manager().prepare_message(session, user, text, conversation)
    for _event in manager().run(session, turn):
        pass
    return turn


def _decline_waiting(session, user, message_id: str) -> None:
    """A booking proposed earlier in the conversation is rejected before the next message, as the
    page makes its requester decide before typing on (a new message meanwhile is a 409); rejecting
    books nothing, so the case judges the next message alone."""
    if session.get(ChatMessage, message_id).status != MessageStatus.AWAITING_CONFIRMATION:
        return
    decision = decisions().prepare(
        session, user, message_id, approve=False, reason="not decided in this conversation"
    )
    for _event in manager().resume(session, decision):
        pass


WRITES = ("record_stock_movement", "create_purchase_request", "create_new_intent")


def unasked_write(case: dict, calls: list[dict]) -> str:
    """A write the case does not ask for fails it, wherever it comes in the answer: a booking
    proposed or a purchase request filed after the right first call is still a write nobody meant."""
    asked = {case["tool"], (case.get("also") or {}).get("tool")}
    unasked = [c["name"] for c in calls if c["name"] in WRITES and c["name"] not in asked]
    return f"also called {unasked[0]}, which the request does not ask for" if unasked else ""


def check_also(session, also: dict, later: list[dict], today: date) -> str:
    """'' when one of the later calls is `also`'s tool with arguments that mean `also`'s."""
    whys = [
        check_arguments(session, also.get("args", {}), call["arguments"], today)
        for call in later
        if call["name"] == also["tool"]
    ]
    if "" in whys:
        return ""
    return f"also {also['tool']}: " + (whys[0] if whys else "never called")


def _has_rows(content: str | None) -> bool:
    data = _arguments(content or "")
    return any(isinstance(v, list) and v for k, v in data.items() if k in ("materials", "items", "movements"))


def _one_found(case: dict) -> bool:
    return len(case["args"].get("keyword_finds", [])) == 1 and not case.get("then")


def _arguments(raw: str) -> dict:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def expected_label(case: dict) -> str:
    return case["tool"] or f"({case.get('outcome')})"


def got_label(result: Result) -> str:
    if result.got_tool != NO_TOOL:
        return result.got_tool
    return f"({result.case.get('outcome')})" if result.case["tool"] is None and result.ok else NO_TOOL


def report(results: list[Result]) -> str:
    """Accuracy overall and per expected tool, and the confusion of first calls."""
    lines = []
    total = len(results)
    right = sum(r.ok for r in results)
    lines.append(f"accuracy: {right}/{total} = {right / total:.1%}")
    by_tool: dict[str, list[Result]] = {}
    for r in results:
        by_tool.setdefault(expected_label(r.case), []).append(r)
    lines.append("| expected | cases | right | accuracy |")
    lines.append("|---|---|---|---|")
    for label, group in sorted(by_tool.items()):
        ok = sum(r.ok for r in group)
        lines.append(f"| {label} | {len(group)} | {ok} | {ok / len(group):.0%} |")
    confusion = Counter(  # the misses only: a detail for a one-material search is right
        (expected_label(r.case), got_label(r)) for r in results if not r.ok
    )
    if confusion:
        lines.append(
            "confused (expected -> got: count): "
            + "; ".join(f"{e} -> {g}: {n}" for (e, g), n in confusion.most_common())
        )
    return "\n".join(lines)
