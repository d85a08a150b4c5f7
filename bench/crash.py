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


def main() -> None:
    args = sys.argv[1:]
    kind = args[args.index("--database") + 1] if "--database" in args else "sqlite"
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 60.0
    stop = threading.Event()
    lock = threading.Lock()
    sent, approved_ok, conversations, kills = [0], [0], set(), [0]
    errors: dict[str, int] = {}

    with deployed(kind, stub_args=("--book", "--delay", "0.2"), workers=2, threads=32) as app:
        materials = [f"M{n:03d}" for n in range(3, 13)]  # plenty in stock: 1 kg at a time

        def client(token: str) -> None:
            session = requests.Session()
            headers = {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}
            while not stop.is_set():
                with lock:
                    sent[0] += 1
                try:
                    r = session.post(
                        f"{app.base}/api/v1/chat",
                        json={"message": f"出库 1 kg {random.choice(materials)}"},
                        headers=headers,
                        timeout=60,
                    )
                    body = (
                        r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {}
                    )
                    if "conversation_id" in body:
                        with lock:
                            conversations.add((token, body["conversation_id"]))
                    if r.status_code != 200 or body.get("status") != "awaiting_confirmation":
                        with lock:
                            key = f"chat {r.status_code} {body.get('status') or body.get('error', {}).get('code')}"
                            errors[key] = errors.get(key, 0) + 1
                        continue
                    d = session.post(
                        f"{app.base}/api/v1/chat/messages/{body['message_id']}/decision",
                        json={"decision": "approve"},
                        headers=headers,
                        timeout=60,
                    )
                    result = d.json()["rounds"][0]["results"][0] if d.status_code == 200 else None
                    with lock:
                        if result and result["status"] == "success":
                            approved_ok[0] += 1
                        else:
                            key = f"decision {d.status_code} {result and result['status']}"
                            errors[key] = errors.get(key, 0) + 1
                except (requests.RequestException, ValueError) as exc:
                    with lock:
                        key = type(exc).__name__
                        errors[key] = errors.get(key, 0) + 1
                    time.sleep(0.2)

        def killer() -> None:
            while not stop.wait(random.uniform(3, 6)):
                workers = app.worker_pids()[1:]
                if workers:
                    os.kill(random.choice(workers), signal.SIGKILL)
                    kills[0] += 1

        threads = [threading.Thread(target=client, args=(t,)) for t in app.tokens[:CLIENTS]]
        threads.append(threading.Thread(target=killer))
        for t in threads:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()
        print(f"{kind}: {seconds:.0f} s of load, {kills[0]} workers killed; waiting {RECOVERY_SECONDS} s")
        time.sleep(RECOVERY_SECONDS)

        engine = create_engine(app.env["INVENTORY_AI_DATABASE_URL"])
        with engine.connect() as conn:
            stored = conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.role == "user")
            )
            running = conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.status == "running")
            )
            interrupted = conn.scalar(
                select(func.count()).select_from(ChatMessage).where(ChatMessage.error_code == "interrupted")
            )
            recorded = conn.scalar(
                select(func.count())
                .select_from(ToolCallRecord)
                .where(ToolCallRecord.name == "record_stock_movement", ToolCallRecord.status == "success")
            )
            ledger = conn.scalar(
                select(func.count())
                .select_from(StockMovement)
                .where(StockMovement.idempotency_key.like("chat:%"))
            )
            orphans = conn.scalar(
                text(
                    "SELECT count(*) FROM stock_movements m WHERE m.idempotency_key LIKE 'chat:%' AND NOT EXISTS "
                    "(SELECT 1 FROM tool_calls c WHERE 'chat:' || c.call_id = m.idempotency_key AND c.status = 'success')"
                )
            )
        engine.dispose()
        blocked = waiting = 0
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
                if status.json()["status"] == "awaiting_confirmation":
                    waiting += 1
                else:
                    blocked += 1
        print(
            f"messages: sent {sent[0]}, stored {stored}, left running {running} (interrupted {interrupted})"
        )
        print(f"bookings: approvals answered with success {approved_ok[0]}, calls recorded successful {recorded}, "
              f"in the ledger {ledger}, in the ledger but not recorded {orphans}")  # fmt: skip
        print(
            f"conversations taking a new message: {min(200, len(conversations)) - blocked} of {min(200, len(conversations))}"
        )
        print("what clients saw besides success:", dict(sorted(errors.items())) or "nothing")
        failures = []
        if running:
            failures.append(f"{running} answers left running")
        if ledger != recorded or orphans:
            failures.append("the ledger and the answers disagree")
        if approved_ok[0] > ledger:
            failures.append("an approval answered with success is missing from the ledger")
        if blocked:
            failures.append(f"{blocked} conversations blocked")
        if stored > sent[0]:
            failures.append("more messages stored than sent")
        print("checks:", "; ".join(failures) if failures else "all pass")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
