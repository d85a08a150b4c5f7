"""The daily token budget's check against a long history: what each chat message pays for it.

    .venv/bin/python bench/token_budget.py [calls] [database URL]   # 60000, a fresh SQLite database

With INVENTORY_AI_DAILY_TOKEN_BUDGET set, every message sums the user's model tokens since the
plant's midnight (services/usage.tokens_today) before the model is asked. This gives one user
`calls` stored model calls, one a minute back from now (60,000 is about six weeks of a user
calling the model every minute), on a seeded database (SQLite unless an empty database's URL is
given), and prints the process CPU of one check (the mean of 200, after one to warm up; the
database's own CPU is not in it on PostgreSQL) and the plan the database chose for it.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

from _common import seeded_app
from sqlalchemy import event, insert, select

from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Conversation, ModelCall, User, utcnow
from inventory_ai.services import usage

CHECKS = 200


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 60_000
    app = seeded_app(sys.argv[2] if len(sys.argv) > 2 else None)
    with app.app_context():
        staff = db.session.scalar(select(User).filter_by(username="staff"))
        conversation = Conversation(user_id=staff.id)
        db.session.add(conversation)
        db.session.flush()
        message = ChatMessage(conversation_id=conversation.id, role="user", content="x", created_seq=1)
        db.session.add(message)
        db.session.flush()
        now = utcnow()
        db.session.execute(
            insert(ModelCall),
            [
                {
                    "message_id": message.id,
                    "user_id": staff.id,
                    "provider": "dashscope",
                    "model": "qwen-plus",
                    "status": "ok",
                    "input_tokens": 100,
                    "output_tokens": 50,
                    "created_at": now - timedelta(minutes=i),
                }
                for i in range(calls)
            ],
        )
        db.session.commit()
        sent = []
        event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append((a[2], a[3])))
        usage.tokens_today(db.session, staff.id)
        started = time.process_time()
        for _ in range(CHECKS):
            usage.tokens_today(db.session, staff.id)
        spent = (time.process_time() - started) * 1000 / CHECKS
        statement, parameters = next((s, p) for s, p in sent if "model_calls" in s)
        explain = "EXPLAIN QUERY PLAN " if db.engine.dialect.name == "sqlite" else "EXPLAIN "
        plan = db.session.connection().exec_driver_sql(explain + statement, parameters).all()
        print(f"{calls:,} model calls of one user: {spent:.2f} ms of CPU a check")
        print("plan: " + "; ".join(row[-1].strip() for row in plan))


if __name__ == "__main__":
    main()
