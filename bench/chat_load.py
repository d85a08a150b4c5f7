"""Concurrent chats against gunicorn, the model being a DashScope-protocol stub that answers in 200 ms.

    .venv/bin/python bench/chat_load.py [clients ...]        # default 8 32 64

Real parts: gunicorn with gunicorn.conf.py (2 workers x 64 gthreads here), the dashscope SDK over
HTTP to tests/dashscope_stub.py on loopback, a seeded SQLite database. Each client is a thread with
its own logged-in session that sends chat messages back to back for a fixed time. The ideal is what a
zero-cost server would do: clients / 0.2 s messages per second, each taking 0.2 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from _common import percentile

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.dashscope_stub import DashScopeStub, Reply  # noqa: E402

MODEL_SECONDS = 0.2
RUN_SECONDS = 8
PORT = 8123
BIN = REPO / ".venv" / "bin"


def client_session(base: str) -> requests.Session:
    session = requests.Session()
    response = session.post(
        f"{base}/api/v1/auth/login", json={"username": "staff", "password": "bench-password"}
    )
    response.raise_for_status()
    session.headers["X-CSRFToken"] = response.json()["csrf_token"]
    return session


def run_level(base: str, clients: int) -> dict:
    sessions = [client_session(base) for _ in range(clients)]
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def client(session: requests.Session) -> None:
        nonlocal failures
        start.wait()
        while time.monotonic() < stop_at[0]:
            began = time.monotonic()
            response = session.post(f"{base}/api/v1/chat", json={"message": "hello"})
            elapsed = time.monotonic() - began
            with lock:
                if response.status_code == 200 and response.json()["status"] == "completed":
                    latencies.append(elapsed)
                else:
                    failures += 1
                    if failures == 1:
                        print(f"first failure: {response.status_code} {response.text[:300]}", file=sys.stderr)

    threads = [threading.Thread(target=client, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    stop_at[0] = time.monotonic() + RUN_SECONDS
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    throughput = len(latencies) / wall
    ideal = clients / MODEL_SECONDS
    return {
        "clients": clients,
        "messages": len(latencies),
        "failures": failures,
        "throughput": throughput,
        "ideal": ideal,
        "share": throughput / ideal,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
    }


def main() -> None:
    levels = [int(x) for x in sys.argv[1:]] or [8, 32, 64]
    folder = tempfile.mkdtemp(prefix="iai-load-")
    with DashScopeStub(default=Reply(content="好的，已收到。", delay=MODEL_SECONDS)) as stub:
        env = {
            **os.environ,
            "INVENTORY_AI_DATABASE_URL": f"sqlite:///{folder}/load.db",
            "DASHSCOPE_API_KEY": "sk-bench-0000000000000000",
            "DASHSCOPE_HTTP_BASE_URL": stub.base_url,
            "INVENTORY_AI_CHAT_RATE_LIMIT": "1000000 per minute",
            "INVENTORY_AI_DEMO_PASSWORD": "bench-password",
            "INVENTORY_AI_BIND": f"127.0.0.1:{PORT}",
            "INVENTORY_AI_WORKERS": "2",
            "INVENTORY_AI_THREADS": "64",
            "PYTHONPATH": str(REPO),  # wsgi.py; instance/ stays in the temporary folder
        }
        for command in (["db", "upgrade"], ["seed"]):
            subprocess.run([BIN / "flask", "--app", "wsgi", *command], env=env, cwd=folder, check=True,
                           capture_output=True)  # fmt: skip
        server = subprocess.Popen(
            [BIN / "gunicorn", "-c", str(REPO / "gunicorn.conf.py"), "--chdir", str(REPO), "wsgi:app"],
            env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=open(f"{folder}/gunicorn.log", "w"),  # noqa: SIM115
        )  # fmt: skip
        base = f"http://127.0.0.1:{PORT}"
        try:
            for _ in range(100):
                try:
                    if requests.get(f"{base}/healthz", timeout=1).ok:
                        break
                except requests.RequestException:  # not up yet
                    time.sleep(0.2)
            print(
                f"gunicorn 2 workers x 64 threads, SQLite, model stub {MODEL_SECONDS * 1000:.0f} ms, {RUN_SECONDS} s per level\n"
            )
            print(
                "| clients | messages | failures | msg/s | ideal msg/s | share of ideal | p50 s | p99 s | p99 / ideal latency |"
            )
            print("|---|---|---|---|---|---|---|---|---|")
            for clients in levels:
                r = run_level(base, clients)
                print(
                    f"| {r['clients']} | {r['messages']} | {r['failures']} | {r['throughput']:.1f} | {r['ideal']:.0f} "
                    f"| {r['share']:.0%} | {r['p50']:.3f} | {r['p99']:.3f} | {r['p99'] / MODEL_SECONDS:.2f}× |",
                    flush=True,
                )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
