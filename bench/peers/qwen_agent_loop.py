"""The loop benchmark's scenario on Qwen-Agent, for a side-by-side figure (docs/benchmarks.md, the loop).

    make bench-peers        # a separate virtualenv (.venv-peers) with qwen-agent, then this script

One user message, one tool round with a no-op tool, a scripted model that answers at once: first a
function call, then the final text. Qwen-Agent keeps the conversation in memory and stores nothing;
the figure is what a lean framework costs per message on the same machine as ours.
"""

from __future__ import annotations

import sys
import time

from qwen_agent.agents import FnCallAgent
from qwen_agent.llm.base import BaseChatModel
from qwen_agent.llm.schema import ASSISTANT, FunctionCall, Message
from qwen_agent.tools.base import BaseTool, register_tool
from timing import report


@register_tool("noop")
class Noop(BaseTool):
    description = "does nothing"
    parameters = {"type": "object", "properties": {}, "required": []}

    def call(self, params, **kwargs):
        return '{"ok": true}'


class Scripted(BaseChatModel):
    """A tool call when the last message is the user's, else the final text."""

    def _reply(self, messages):
        if messages[-1].role == "function":
            return [Message(ASSISTANT, "done")]
        return [Message(ASSISTANT, "", function_call=FunctionCall("noop", "{}"), extra={"function_id": "1"})]

    def _chat_with_functions(self, messages, functions, stream, delta_stream, generate_cfg, lang):
        reply = self._reply(messages)
        return iter([reply]) if stream else reply

    def _chat_stream(self, messages, delta_stream, generate_cfg):
        return iter([self._reply(messages)])

    def _chat_no_stream(self, messages, generate_cfg):
        return self._reply(messages)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    agent = FnCallAgent(function_list=["noop"], llm=Scripted({"model": "scripted"}))

    def one() -> float:
        started = time.perf_counter()
        *_, last = agent.run([{"role": "user", "content": "bench"}])
        assert last[-1]["content"] == "done" and last[-2]["role"] == "function", last
        return (time.perf_counter() - started) * 1000

    report(
        f"Qwen-Agent {sys.modules['qwen_agent'].__version__}, one round, no-op tool, nothing stored", one, n
    )


if __name__ == "__main__":
    main()
