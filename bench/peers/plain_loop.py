"""The loop benchmark's scenario written by hand: the floor under any framework's loop.

    make bench-peers        # after Qwen-Agent, with the project's own interpreter (no imports of ours)

One user message, one tool round with a no-op tool, a scripted model that answers at once: first a
function call, then the final text. The messages are plain dicts kept in a list, the tool call's JSON
arguments are parsed and its result serialised, the loop is capped at five model calls; nothing is
stored. Issue 37's CPU goal compares what a framework adds to this (Qwen-Agent's p50 minus this one)
with what our loop adds to the floor of its own statements (loop_overhead.py minus loop_floor.py).
"""

from __future__ import annotations

import json
import sys
import time

from timing import report


def noop(_arguments: dict) -> dict:
    return {"ok": True}


TOOLS = {"noop": noop}


def scripted_model(messages: list[dict]) -> dict:
    """A tool call when the last message is the user's, else the final text."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": "done"}
    call = {"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def run(text: str) -> list[dict]:
    messages = [{"role": "user", "content": text}]
    for _ in range(5):
        reply = scripted_model(messages)
        messages.append(reply)
        calls = reply.get("tool_calls")
        if not calls:
            break
        for call in calls:
            function = call["function"]
            result = TOOLS[function["name"]](json.loads(function["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return messages


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300

    def one() -> float:
        started = time.perf_counter()
        last = run("bench")
        assert last[-1]["content"] == "done" and last[-2]["role"] == "tool", last
        return (time.perf_counter() - started) * 1000

    report("a hand-written loop, one round, no-op tool, nothing stored", one, n, places=3)


if __name__ == "__main__":
    main()
