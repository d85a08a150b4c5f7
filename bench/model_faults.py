"""The model misbehaves under load: a 429 storm, a run of 500s, slow answers. What do users get?

    .venv/bin/python bench/model_faults.py [--database sqlite|postgresql]

gunicorn (2 workers x 32 threads, production mode) with the circuit breaker shared through Redis
(127.0.0.1:6379, database 15, emptied first) and metrics of both workers together; the model is
tests/support/dashscope_stub.py in its own process, following a schedule from its first request:

    ok 5 s | 429 storm 5 s | ok 40 s | 500s 5 s | ok 40 s | slow (2 s answers) 10 s | ok 5 s

16 clients (bearer users) send numbered messages back to back. A monitor reads /healthz and the
breaker gauge from /metrics every 0.25 s. Reported per phase: what the answers were, latency, and
whether the breaker was seen open; then the checks: every message sent is stored, no answer is
left running, every 503 carried Retry-After, /healthz never failed, no worker was restarted.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass

import redis
import requests
from _common import percentile
from _server import deployed
from sqlalchemy import create_engine, text

SCHEDULE = [("ok", 5), ("429", 5), ("ok", 40), ("500", 5), ("ok", 40), ("slow", 10), ("ok", 5)]
CLIENTS = 16
REDIS_URL = "redis://127.0.0.1:6379/15"


@dataclass
class Answer:
    sent_at: float  # seconds since the first message
    seconds: float
    http: int | None  # None: no HTTP answer at all
    status: str  # completed / failed / the error code / connection error
    retry_after: bool


def phase_of(t: float) -> int:
    for index, (_kind, seconds) in enumerate(SCHEDULE):
        if t < seconds:
            return index
        t -= seconds
    return len(SCHEDULE) - 1


class Traffic:
    """Clients chatting through the schedule of faults, and a monitor of /healthz and the breaker."""

    def __init__(self, app, seconds: float) -> None:
        self.app = app
        self.answers: list[Answer] = []
        self.sent: list[str] = []
        self.health: list[tuple[float, bool, float]] = []
        self.breaker: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.stop_at = self.started + seconds

    def client(self, number: int) -> None:
        session = requests.Session()
        session.headers.update(
            {"Authorization": f"Bearer {self.app.tokens[number]}", "X-Forwarded-Proto": "https"}
        )
        n = 0
        while time.monotonic() < self.stop_at:
            n += 1
            text_ = f"fault bench {number}-{n}: 查一下面粉库存"
            with self.lock:
                self.sent.append(text_)
            began = time.monotonic()
            try:
                r = session.post(f"{self.app.base}/api/v1/chat", json={"message": text_}, timeout=120)
                body = r.json()
                status = body.get("status") or body.get("error", {}).get("code", "?")
                answer = Answer(began - self.started, time.monotonic() - began, r.status_code, status,
                                "Retry-After" in r.headers)  # fmt: skip
            except (requests.RequestException, ValueError) as exc:
                answer = Answer(
                    began - self.started, time.monotonic() - began, None, type(exc).__name__, False
                )
            with self.lock:
                self.answers.append(answer)

    def monitor(self) -> None:
        while time.monotonic() < self.stop_at:
            t = time.monotonic() - self.started
            try:
                r = requests.get(f"{self.app.base}/healthz", timeout=5)
                self.health.append((t, r.ok, r.elapsed.total_seconds()))
            except requests.RequestException:
                self.health.append((t, False, 5.0))
            try:
                for line in requests.get(f"{self.app.base}/metrics", timeout=5).text.splitlines():
                    if line.startswith("inventory_ai_model_breaker_open"):
                        self.breaker.append((t, float(line.split()[-1])))
            except requests.RequestException:
                pass
            time.sleep(0.25)

    def run(self) -> None:
        threads = [threading.Thread(target=self.client, args=(i,)) for i in range(CLIENTS)]
        threads.append(threading.Thread(target=self.monitor))
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def stored_state(url: str) -> tuple[set[str], int]:
    """The questions the database kept, and how many answers it still has running."""
    engine = create_engine(url)
    with engine.connect() as conn:
        stored = {
            row[0]
            for row in conn.execute(
                text("SELECT content FROM messages WHERE role = 'user' AND content LIKE 'fault bench %'")
            )
        }
        running = conn.execute(
            text("SELECT count(*) FROM messages WHERE role = 'assistant' AND status = 'running'")
        ).scalar()
    engine.dispose()
    return stored, running


def print_phases(traffic: Traffic) -> None:
    print("| phase | model | messages | answered (status) | p50 s | p99 s | breaker seen open |")
    print("|---|---|---|---|---|---|---|")
    at = 0.0
    for index, (model, seconds) in enumerate(SCHEDULE):
        mine = [a for a in traffic.answers if phase_of(a.sent_at) == index]
        outcomes = Counter(f"{a.http} {a.status}" for a in mine)
        opened = any(v >= 1 for t, v in traffic.breaker if at <= t < at + seconds)
        latencies = [a.seconds for a in mine] or [0.0]
        print(
            f"| {at:.0f}–{at + seconds:.0f} s | {model} | {len(mine)} "
            f"| {', '.join(f'{k}: {v}' for k, v in outcomes.most_common())} "
            f"| {percentile(latencies, 50):.2f} | {percentile(latencies, 99):.2f} | {'yes' if opened else 'no'} |"
        )
        at += seconds


def main() -> None:
    args = sys.argv[1:]
    kind = args[args.index("--database") + 1] if "--database" in args else "sqlite"
    try:
        redis.Redis.from_url(REDIS_URL).flushdb()
    except redis.RedisError:
        sys.exit("Redis on 127.0.0.1:6379 is needed: the breaker is shared through it")
    schedule = ",".join(f"{k}:{s}" for k, s in SCHEDULE)
    total = sum(s for _, s in SCHEDULE)
    with deployed(
        kind,
        ("--delay", "0.2", "--schedule", schedule),
        workers=2,
        threads=32,
        extra_env={"INVENTORY_AI_REDIS_URL": REDIS_URL},
    ) as app:
        pids_before = sorted(app.worker_pids())
        traffic = Traffic(app, total)
        traffic.run()
        pids_after = sorted(app.worker_pids())
        stored, running = stored_state(app.env["INVENTORY_AI_DATABASE_URL"])

    print(f"gunicorn 2 workers x 32 threads, {kind}, Redis-shared breaker, {CLIENTS} clients, {total} s\n")
    print_phases(traffic)
    answers, sent, health, breaker = traffic.answers, traffic.sent, traffic.health, traffic.breaker
    unavailable = [a for a in answers if a.http == 503]
    checks = {
        "every message sent is stored": len(stored) == len(sent) == len(set(sent)),
        "no answer left running": running == 0,
        "every 503 carried Retry-After": all(a.retry_after for a in unavailable),
        "no 500 and no connection error": not any(a.http is None or a.http == 500 for a in answers),
        "/healthz always answered": all(ok for _, ok, _ in health),
        "the breaker opened, then closed again": any(v >= 1 for _, v in breaker) and breaker[-1][1] == 0,
        "no worker restarted": pids_before == pids_after,
    }
    print(
        f"\nmessages sent {len(sent)}, stored {len(stored)}; /healthz max {max(s for *_, s in health):.3f} s"
    )
    for name, ok in checks.items():
        print(f"- {'PASS' if ok else 'FAIL'}: {name}")
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
