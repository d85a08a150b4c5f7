"""Python function calls a chat message makes in the server: a count the machine's speed does not move.

    .venv/bin/python bench/chat_calls.py [messages] [--database postgresql]

`POST /api/v1/chat` through Flask's test client, in this process: production settings, a bearer
token, the real dashscope SDK over HTTP to the stub answering at once (tests/support/dashscope_stub.py),
every hook, the loop and its writes, as `chat_load.py` drives them through gunicorn. The count comes
from cProfile over the measured messages, after a warm-up; the test client's own calls are in it
too (a few hundred, the same on both sides of a comparison). Reported beside it: process CPU a
message, the best of 5 batches without the profiler, which moves with the machine as timings do.
The ten packages with the most calls a message follow: where the count goes.
"""

from __future__ import annotations

import collections
import cProfile
import logging
import os
import pstats
import sys
import time

from _server import USERS, deployed

WARM_UP = 300


def package_of(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0]
    if "/inventory_ai/" in filename:
        return "inventory_ai"
    return "Python and its standard library" if filename != "~" else "built-in functions"


def main() -> None:
    args = sys.argv[1:]
    kind = args.pop(args.index("--database") + 1) if "--database" in args else "sqlite"
    args = [a for a in args if a != "--database"]
    n = int(args[0]) if args else 1000
    with deployed(kind, ("--delay", "0"), 1, 4) as app:
        app.server.terminate()  # only its database, users and stub are wanted: the app runs here
        app.server.wait()
        os.environ.update(app.env)
        os.chdir(app.folder)
        from inventory_ai import create_app

        server = create_app()
        logging.disable(logging.INFO)
        client = server.test_client()

        def ask(i: int) -> None:
            headers = {"Authorization": f"Bearer {app.tokens[i % USERS]}", "X-Forwarded-Proto": "https"}
            reply = client.post("/api/v1/chat", json={"message": "hello"}, headers=headers)
            assert reply.status_code == 200 and b'"completed"' in reply.data, reply.data[:300]

        for i in range(WARM_UP):
            ask(i)
        cpu = []
        for _ in range(5):
            started = time.process_time()
            for i in range(n):
                ask(i)
            cpu.append((time.process_time() - started) * 1000 / n)
        profile = cProfile.Profile()
        profile.enable()
        for i in range(n):
            ask(i)
        profile.disable()
        stats = pstats.Stats(profile).stats
        calls = collections.Counter()
        for (filename, _line, _name), (_primitive, count, *_rest) in stats.items():
            calls[package_of(filename)] += count
        print(f"POST /api/v1/chat in process, {kind}, {n} messages, the stub answering at once\n")
        print(f"Python calls a message: {sum(calls.values()) / n:,.0f}")
        print(f"process CPU a message, best of 5 batches: {min(cpu):.2f} ms\n")
        print("| package | calls a message |\n|---|---|")
        for package, count in calls.most_common(10):
            print(f"| {package} | {count / n:,.0f} |")


if __name__ == "__main__":
    main()
