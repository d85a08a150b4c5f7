"""A local HTTP server that speaks DashScope's native text-generation protocol, for tests and benches.

POST /api/v1/services/aigc/text-generation/generation with {"model", "input": {"messages"},
"parameters": {...}}. JSON replies; Server-Sent Events when the request has X-DashScope-SSE: enable
(id:/event:result/:HTTP_STATUS/200/data: lines), incremental or cumulative as the request asks;
tool calls streamed in fragments joined by index; error bodies {"code", "message", "request_id"};
a non-JSON 502; a streamed event:error. Every request is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = "/api/v1/services/aigc/text-generation/generation"


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True
    # As a real service takes them: a worker opening its 64 model connections at once is not left
    # waiting. The default backlog of 5 dropped the rest, and each waited for a SYN resent after 1 s.
    request_queue_size = 256


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)  # [{"id", "name", "arguments"}]
    reasoning: str = ""
    finish_reason: str | None = None
    usage: tuple[int, int] = (12, 7)
    delay: float = 0.0


@dataclass
class Error:
    status: int
    code: str
    message: str = "error"


@dataclass
class NonJson:
    status: int = 502
    body: str = "<html><body>502 Bad Gateway</body></html>"


@dataclass
class StreamError:
    """Starts a stream, sends `chunks` of text, then an event:error."""

    code: str = "InternalError"
    message: str = "stream broke"
    chunks: int = 1


@dataclass
class Empty:
    """200 and then nothing: an empty body (JSON) or a stream that ends before its first event."""


Behaviour = Reply | Error | NonJson | StreamError | Empty | Callable[[dict], "Behaviour"]


def tool_call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id or f"call_{uuid.uuid4().hex[:12]}", "name": name, "arguments": raw}


class DashScopeStub:
    def __init__(self, default: Behaviour | None = None, port: int = 0, record: bool = True):
        self.script: list[Behaviour] = []
        self.record = record  # off for long benchmark runs, which would keep every request
        self.default = default
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.connections = 0  # TCP connections accepted: tells whether clients reuse them
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # small SSE frames on a kept-alive connection go out at once

            def log_message(self, *args):  # quiet
                pass

            def setup(self):
                super().setup()
                with stub._lock:
                    stub.connections += 1

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    if stub.record:
                        stub.requests.append(body)
                        stub.headers.append(dict(self.headers))
                    behaviour = stub.script.pop(0) if stub.script else stub.default
                if self.path.split("?")[0] != PATH:
                    return self._json(404, {"code": "NotFound", "message": self.path})
                if callable(behaviour):
                    behaviour = behaviour(body)
                if behaviour is None:
                    return self._json(500, {"code": "InternalError", "message": "stub has no script left"})
                stream = self.headers.get("X-DashScope-SSE", "").lower() == "enable"
                stub.serve(self, behaviour, body, stream)

            def _json(self, status, payload):
                data = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _StubServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"

    def __enter__(self) -> DashScopeStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def then(self, *behaviours: Behaviour) -> DashScopeStub:
        self.script.extend(behaviours)
        return self

    # --- the protocol ----------------------------------------------------------------------

    def serve(self, handler, behaviour, body: dict, stream: bool) -> None:
        request_id = str(uuid.uuid4())
        if isinstance(behaviour, Error):
            return handler._json(
                behaviour.status,
                {"code": behaviour.code, "message": behaviour.message, "request_id": request_id},
            )
        if isinstance(behaviour, NonJson):
            data = behaviour.body.encode()
            handler.send_response(behaviour.status)
            handler.send_header("Content-Type", "text/html")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return None
        if isinstance(behaviour, Empty):
            handler.send_response(200)
            handler.send_header(
                "Content-Type", "text/event-stream;charset=UTF-8" if stream else "application/json"
            )
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return None
        if isinstance(behaviour, Reply) and behaviour.delay:
            time.sleep(behaviour.delay)
        if not stream:
            if isinstance(behaviour, StreamError):
                return handler._json(
                    500, {"code": behaviour.code, "message": behaviour.message, "request_id": request_id}
                )
            return handler._json(200, self._whole(behaviour, request_id))
        # Chunked, as DashScope streams: the connection stays open for the client's next call.
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream;charset=UTF-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        incremental = bool(body.get("parameters", {}).get("incremental_output"))
        for n, event in enumerate(self._events(behaviour, request_id, incremental), start=1):
            kind, status, payload = event
            frame = f"id:{n}\nevent:{kind}\n:HTTP_STATUS/{status}\ndata:{json.dumps(payload, ensure_ascii=False)}\n\n"
            data = frame.encode()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
        return None

    @staticmethod
    def _usage(reply: Reply) -> dict:
        i, o = reply.usage
        return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}

    def _whole(self, reply: Reply, request_id: str) -> dict:
        message = {"role": "assistant", "content": reply.content}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "index": i,
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for i, c in enumerate(reply.tool_calls)
            ]
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        return {
            "output": {"choices": [{"finish_reason": finish, "message": message}]},
            "usage": self._usage(reply),
            "request_id": request_id,
        }

    def _events(self, behaviour, request_id: str, incremental: bool):
        """Each event: (kind, http status, payload). Cumulative mode repeats everything so far."""
        if isinstance(behaviour, StreamError):
            sent = ""
            for _ in range(behaviour.chunks):
                sent += "部分"
                piece = "部分" if incremental else sent
                yield (
                    "result",
                    200,
                    self._chunk({"role": "assistant", "content": piece}, "null", (5, 1), request_id),
                )
            yield (
                "error",
                500,
                {"code": behaviour.code, "message": behaviour.message, "request_id": request_id},
            )
            return
        reply: Reply = behaviour
        deltas: list[dict] = []
        for i in range(0, len(reply.reasoning), 8):
            deltas.append({"reasoning_content": reply.reasoning[i : i + 8]})
        for i in range(0, len(reply.content), 6):
            deltas.append({"content": reply.content[i : i + 6]})
        for index, c in enumerate(reply.tool_calls):
            args = c["arguments"]
            deltas.append(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for j in range(0, len(args), 10):
                deltas.append(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": "",
                                "type": "function",
                                "function": {"arguments": args[j : j + 10]},
                            }
                        ]
                    }
                )
        if not deltas:
            deltas.append({"content": ""})
        seen = {"content": "", "reasoning_content": ""}
        calls: dict[int, dict] = {}
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        for n, delta in enumerate(deltas):
            last = n == len(deltas) - 1
            if incremental:
                message = {
                    "role": "assistant",
                    "content": delta.get("content", ""),
                    **{k: v for k, v in delta.items() if k != "content"},
                }
            else:
                for key in ("content", "reasoning_content"):
                    seen[key] += delta.get(key, "")
                for fragment in delta.get("tool_calls", []):
                    call = calls.setdefault(
                        fragment["index"],
                        {
                            "index": fragment["index"],
                            "id": "",
                            "type": "function",
                            "function": {"name": "", "arguments": ""},
                        },
                    )
                    call["id"] = fragment["id"] or call["id"]
                    call["function"]["name"] += fragment["function"].get("name", "")
                    call["function"]["arguments"] += fragment["function"].get("arguments", "")
                message = {"role": "assistant", "content": seen["content"]}
                if seen["reasoning_content"]:
                    message["reasoning_content"] = seen["reasoning_content"]
                if calls:
                    message["tool_calls"] = [json.loads(json.dumps(c)) for _, c in sorted(calls.items())]
            out_tokens = reply.usage[1] if last else n + 1
            yield (
                "result",
                200,
                self._chunk(message, finish if last else "null", (reply.usage[0], out_tokens), request_id),
            )

    @staticmethod
    def _chunk(message: dict, finish: str, usage: tuple[int, int], request_id: str) -> dict:
        return {
            "output": {"choices": [{"message": message, "finish_reason": finish}]},
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage)},
            "request_id": request_id,
        }


def scheduled(phases: list[tuple[str, float]], delay: float, content: str) -> Callable[[dict], Behaviour]:
    """Behaviour by time since the first request: [("429", 5), ("ok", 40), ...], then "ok".
    Kinds: ok (answers after `delay`), slow (after 10 x delay), 429 (throttled), 500 (server error)."""
    kinds = {
        "ok": Reply(content=content, delay=delay),
        "slow": Reply(content=content, delay=delay * 10),
        "429": Error(429, "Throttling.RateQuota", "Requests rate limit exceeded"),
        "500": Error(500, "InternalError", "internal error"),
    }
    started: list[float] = []

    def behaviour(_body: dict) -> Behaviour:
        if not started:
            started.append(time.monotonic())
        elapsed = time.monotonic() - started[0]
        for kind, seconds in phases:
            if elapsed < seconds:
                return kinds[kind]
            elapsed -= seconds
        return kinds["ok"]

    return behaviour


def booker(delay: float) -> Callable[[dict], Behaviour]:
    """A model that books what it is asked ("出库 1 kg M012" -> record_stock_movement), then answers
    with the result: the crash benchmark's model."""
    import re

    def behaviour(body: dict) -> Behaviour:
        last = body["input"]["messages"][-1]
        if last["role"] != "user":
            return Reply(content="已处理。", delay=delay)
        code = re.search(r"M\d{3}", last.get("content") or "")
        arguments = {
            "material": code.group(0) if code else "M003",
            "warehouse": "主仓库",
            "movement_type": "outbound",
            "quantity": 1,
            "unit": "kg",
            "reason": "crash bench",
        }
        return Reply(tool_calls=[tool_call("record_stock_movement", arguments)], delay=delay)

    return behaviour


def main() -> None:
    """Serve in its own process (benchmarks): prints the base URL, then answers until killed."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--content", default="好的，已收到。")
    parser.add_argument(
        "--schedule", default="", help="phases from the first request, e.g. 429:5,ok:40,500:5"
    )
    parser.add_argument("--book", action="store_true", help="ask for a booking, then answer (bench/crash.py)")
    args = parser.parse_args()
    phases = [
        (kind, float(seconds)) for kind, seconds in (p.split(":") for p in args.schedule.split(",") if p)
    ]
    behaviour = booker(args.delay) if args.book else scheduled(phases, args.delay, args.content)
    with DashScopeStub(default=behaviour, port=args.port, record=False) as stub:
        print(stub.base_url, flush=True)
        stub.thread.join()  # until SIGTERM (or Ctrl-C)


if __name__ == "__main__":
    main()
