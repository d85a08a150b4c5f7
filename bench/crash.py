"""Workers killed under load: is anything lost, is anything stuck?

    .venv/bin/python bench/crash.py [--database sqlite|postgresql] [--seconds 60]

gunicorn (2 workers x 32 threads, production mode), the dashscope SDK talking to the stub in its
own process as a model that books what it is asked ("出库 1 kg M012") and then answers. 32 clients
(bearer users) each ask for a booking and approve it, over and over, in new conversations; every
few seconds a worker is killed with SIGKILL (gunicorn starts a new one). After --seconds the load
and the killing stop; a minute later (the stale time is 45 s, the sweep every 10 s) the database is
read directly:

- messages: sent by the clients / stored / left running (goal 0);
- bookings: approvals answered 200 with a success / calls recorded as successful bookings /
  movements in the ledger with a chat key (all three equal: nothing approved is lost, nothing is
  booked that the answers do not say);
- every conversation takes a new message (none is blocked).
Exits non-zero when a check fails.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

import requests
from _server import deployed
from sqlalchemy import create_engine, func, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from inventory_ai.models import ChatMessage, StockMovement, ToolCallRecord  # noqa: E402

CLIENTS = 32
RECOVERY_SECONDS = 65


class Load:
    """What the clients send and see while workers are killed under them."""

    def __init__(self, app) -> None:
        self.app = app
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.sent = self.approved_ok = self.kills = 0
        self.conversations: set[tuple[str, str]] = set()
        self.errors: dict[str, int] = {}
        self.materials = [f"M{n:03d}" for n in range(3, 13)]  # plenty in stock: 1 kg at a time

    def count_error(self, key: str) -> None:
        with self.lock:
            self.errors[key] = self.errors.get(key, 0) + 1

    def client(self, token: str) -> None:
        session = requests.Session()
        headers = {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}
        while not self.stop.is_set():
            with self.lock:
                self.sent += 1
            try:
                self.book_once(session, headers, token)
            except (requests.RequestException, ValueError) as exc:
                self.count_error(type(exc).__name__)
                time.sleep(0.2)

    def book_once(self, session: requests.Session, headers: dict, token: str) -> None:
        r = session.post(
            f"{self.app.base}/api/v1/chat",
            json={"message": f"出库 1 kg {random.choice(self.materials)}"},
            headers=headers,
            timeout=60,
        )
        body = r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {}
        if "conversation_id" in body:
            with self.lock:
                self.conversations.add((token, body["conversation_id"]))
        if r.status_code != 200 or body.get("status") != "awaiting_confirmation":
            self.count_error(
                f"chat {r.status_code} {body.get('status') or body.get('error', {}).get('code')}"
            )
            return
        d = session.post(
            f"{self.app.base}/api/v1/chat/messages/{body['message_id']}/decision",
            json={"decision": "approve"},
            headers=headers,
            timeout=60,
        )
        result = d.json()["rounds"][0]["results"][0] if d.status_code == 200 else None
        if result and result["status"] == "success":
            with self.lock:
                self.approved_ok += 1
        else:
            self.count_error(f"decision {d.status_code} {result and result['status']}")

    def killer(self) -> None:
        while not self.stop.wait(random.uniform(3, 6)):
            workers = self.app.worker_pids()[1:]
            if workers:
                os.kill(random.choice(workers), signal.SIGKILL)
                self.kills += 1

    def run(self, seconds: float) -> None:
        threads = [threading.Thread(target=self.client, args=(t,)) for t in self.app.tokens[:CLIENTS]]
        threads.append(threading.Thread(target=self.killer))
        for t in threads:
            t.start()
        time.sleep(seconds)
        self.stop.set()
        for t in threads:
            t.join()


def stored_counts(url: str) -> dict[str, int]:
    """What the database holds once the load is over: messages, answers left running, bookings."""
    engine = create_engine(url)
    with engine.connect() as conn:
        counts = {
            "stored": conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.role == "user")
            ),
            "running": conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.status == "running")
            ),
            "interrupted": conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.error_code == "interrupted")
            ),
            "recorded": conn.scalar(
                select(func.count())
                .select_from(ToolCallRecord)
                .where(ToolCallRecord.name == "record_stock_movement", ToolCallRecord.status == "success")
            ),
            "ledger": conn.scalar(
                select(func.count())
                .select_from(StockMovement)
                .where(StockMovement.idempotency_key.like("chat:%"))
            ),
            "orphans": conn.scalar(
                text(
                    "SELECT count(*) FROM stock_movements m WHERE m.idempotency_key LIKE 'chat:%' AND NOT EXISTS "
                    "(SELECT 1 FROM tool_calls c WHERE 'chat:' || c.call_id = m.idempotency_key AND c.status = 'success')"
                )
            ),
        }
    engine.dispose()
    return counts


def blocked_conversations(app, conversations: set[tuple[str, str]]) -> int:
    """Of (up to 200 of) the conversations, how many refuse a new message for no good reason."""
    blocked = 0
    for token, conversation_id in sorted(conversations)[:200]:
        headers = {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}
        r = requests.post(
            f"{app.base}/api/v1/chat",
            json={"message": "还在吗", "conversation_id": conversation_id},
            headers=headers,
            timeout=60,
        )
        if r.status_code == 409:  # fine only if a booking waits for its user (the approval was cut off)
            held = r.json()["error"]["details"]["message_id"]
            status = requests.get(f"{app.base}/api/v1/chat/messages/{held}", headers=headers, timeout=30)
            if status.json()["status"] != "awaiting_confirmation":
                blocked += 1
    return blocked


def failures(load: Load, counts: dict[str, int], blocked: int) -> list[str]:
    found = []
    if counts["running"]:
        found.append(f"{counts['running']} answers left running")
    if counts["ledger"] != counts["recorded"] or counts["orphans"]:
        found.append("the ledger and the answers disagree")
    if load.approved_ok > counts["ledger"]:
        found.append("an approval answered with success is missing from the ledger")
    if blocked:
        found.append(f"{blocked} conversations blocked")
    if counts["stored"] > load.sent:
        found.append("more messages stored than sent")
    return found


def main() -> None:
    args = sys.argv[1:]
    kind = args[args.index("--database") + 1] if "--database" in args else "sqlite"
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 60.0

    with deployed(kind, stub_args=("--book", "--delay", "0.2"), workers=2, threads=32) as app:
        load = Load(app)
        load.run(seconds)
        print(f"{kind}: {seconds:.0f} s of load, {load.kills} workers killed; waiting {RECOVERY_SECONDS} s")
        time.sleep(RECOVERY_SECONDS)
        counts = stored_counts(app.env["INVENTORY_AI_DATABASE_URL"])
        blocked = blocked_conversations(app, load.conversations)
        print(
            f"messages: sent {load.sent}, stored {counts['stored']}, left running {counts['running']} "
            f"(interrupted {counts['interrupted']})"
        )
        print(f"bookings: approvals answered with success {load.approved_ok}, calls recorded successful "
              f"{counts['recorded']}, in the ledger {counts['ledger']}, in the ledger but not recorded "
              f"{counts['orphans']}")  # fmt: skip
        tried = min(200, len(load.conversations))
        print(f"conversations taking a new message: {tried - blocked} of {tried}")
        print("what clients saw besides success:", dict(sorted(load.errors.items())) or "nothing")
        found = failures(load, counts, blocked)
        print("checks:", "; ".join(found) if found else "all pass")
        sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
