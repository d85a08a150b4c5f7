"""What cutting the history to its token budget costs per model call (assistant/history.py).

    .venv/bin/python bench/history.py [turns]

A conversation of `turns` earlier turns (default 60) built from the seeded warehouse: every other
turn searched (search_materials 面粉, 10 rows) and listed low stock (10 rows) in one round, the
others are plain; answers are two lines. Reported: loading the tokenizer; counting one text; and
`history.expand` at the default budget cold (nothing counted yet in this process), warm (the same
conversation again: the loop's next model call), after one more turn (the user's next message), and
for a short conversation that fits by its bytes (no tokenizer).
"""

from __future__ import annotations

import json
import logging
import sys
import time

from _common import percentile, seeded_app

from inventory_ai.assistant import history, tokens
from inventory_ai.assistant.compaction import dumps
from inventory_ai.assistant.extension import manager
from inventory_ai.config import HISTORY_TOKEN_BUDGET
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, ToolCallRecord, ToolRound, new_id
from tests.support.tool_context import context


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def conversation(turns: int, results: list[tuple[str, str, str]]) -> list[ChatMessage]:
    """Stored messages (not in a database: expand only reads them) and the running answer last."""
    out, seq = [], 0
    for n in range(turns + 1):
        seq += 1
        out.append(
            ChatMessage(id=new_id(), created_seq=seq, role="user", content=f"第{n}次：帮我查一下面粉还有多少")
        )
        seq += 1
        answer = ChatMessage(id=new_id(), created_seq=seq, role="assistant", status="completed", rounds=[])
        if n == turns:
            answer.status, answer.content = "running", ""
        else:
            answer.content = f"第{n}次：高筋面粉 100 kg、低筋面粉 80 kg，都在主仓库。\n可可液块低于补货点，建议补货 17.4 kg。"
        if n % 2 == 0 and n != turns:
            calls = [
                ToolCallRecord(
                    position=i,
                    call_id=new_id(),
                    model_call_id=f"call_{new_id()[:12]}",
                    name=name,
                    arguments=arguments,
                    status="success",
                    content=content,
                )  # fmt: skip
                for i, (name, arguments, content) in enumerate(results)
            ]
            answer.rounds = [ToolRound(id=n, position=0, calls=calls)]
        out.append(answer)
    return out


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    logging.disable(logging.INFO)
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    app = seeded_app()
    with app.app_context():
        registry = manager().registry
        results = []
        for name, arguments in (
            ("search_materials", {"keyword": "面粉", "limit": 10}),
            ("list_low_stock", {"limit": 10}),
        ):
            content = dumps(registry.get(name).execute(arguments, context(db.session)))
            results.append((name, json.dumps(arguments, ensure_ascii=False), content))

    before = rss_mb()
    started = time.perf_counter()
    tokens.count("你好")
    load_ms = (time.perf_counter() - started) * 1000
    print(f"tokenizer load: {load_ms:.0f} ms, +{rss_mb() - before:.0f} MB RSS\n")

    print("| text | chars | tokens | µs per count |\n|---|---|---|---|")
    samples = {
        "a question": "第3次：帮我查一下面粉还有多少",
        "a two-line answer": "第3次：高筋面粉 100 kg、低筋面粉 80 kg，都在主仓库。\n可可液块低于补货点，建议补货 17.4 kg。",
        "search_materials result, 10 rows": results[0][2],
        "list_low_stock result, 10 rows": results[1][2],
    }
    for label, text in samples.items():
        times = timed(lambda text=text: tokens.count(text), 2000)
        print(f"| {label} | {len(text)} | {tokens.count(text)} | {percentile(times, 50) * 1000:.0f} |")

    stored = conversation(turns, results)
    current = stored[-1]
    print(
        f"\n{turns} earlier turns ({len(stored) - 1} stored messages), budget {HISTORY_TOKEN_BUDGET} tokens:\n"
    )
    print("| expand | p50 ms | p95 ms | messages sent | tokens sent |\n|---|---|---|---|---|")

    def report(label: str, times: list[float], messages: list[ChatMessage], answer: ChatMessage) -> None:
        sent = history.expand(messages, answer)
        print(
            f"| {label} | {percentile(times, 50):.2f} | {percentile(times, 95):.2f} | {len(sent)} | "
            f"{history.size(sent)} |"
        )

    cold = []
    for _ in range(20):  # a fresh conversation each time: nothing of it counted yet
        fresh = conversation(turns, results)
        cold += timed(lambda fresh=fresh: history.expand(fresh, fresh[-1]), 1)
    report("cold: no turn counted yet in this process", cold, stored, current)
    report(
        "warm: the loop's next model call",
        timed(lambda: history.expand(stored, current), 200),
        stored,
        current,
    )
    history.expand(stored, current)
    next_message = []
    for _ in range(20):  # the same stored turns, and one more after them (new ids: not counted yet)
        grown = conversation(turns + 1, results)
        for m, old in zip(grown, stored[:-1], strict=False):
            m.id = old.id
        next_message += timed(lambda grown=grown: history.expand(grown, grown[-1]), 1)
    report("one more turn: the user's next message", next_message, grown, grown[-1])
    short = conversation(3, results)
    report(
        "3 turns: fit by their bytes, no tokenizer",
        timed(lambda: history.expand(short, short[-1]), 200),
        short,
        short[-1],
    )


if __name__ == "__main__":
    main()
