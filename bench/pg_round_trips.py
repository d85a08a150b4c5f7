"""Round trips to PostgreSQL a chat message makes, counted in libpq's trace of the protocol
(tests/support/round_trips.py): a count the machine's load does not move.

    .venv/bin/python bench/pg_round_trips.py [messages] [--database NAME]

On a fresh seeded database NAME (default iai_bench_round_trips, on 127.0.0.1:5432, created from the
maintenance database `postgres` and dropped at the end), through the loop in process with a scripted
model: for each kind of message, after one of warm-up, `messages` messages (default 20), and the
round trips and statements a message (BEGIN and COMMIT counted as statements).
Kinds: a new conversation answered at once (bench/chat_load.py's message), a message in an existing
conversation answered at once, a new conversation with one read tool call before the answer, and a
new conversation of a person who works in one warehouse (its id read with the codes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import create_engine, text  # noqa: E402

from inventory_ai import create_app  # noqa: E402
from inventory_ai.assistant.extension import manager  # noqa: E402
from inventory_ai.config import config_for_tests  # noqa: E402
from inventory_ai.extensions import db  # noqa: E402
from tests.support.databases import build_seeded, let_go  # noqa: E402
from tests.support.factories import user_named  # noqa: E402
from tests.support.round_trips import counted  # noqa: E402
from tests.support.scripted import ScriptedProvider, answer, call, calls, use  # noqa: E402

KINDS = {  # (in an existing conversation, the model's script, who asks: `coldstore` works in WH02 only)
    "new conversation, answered at once": (False, lambda: [answer("好")], "staff"),
    "existing conversation, answered at once": (True, lambda: [answer("好")], "staff"),
    "new conversation, one read tool call": (
        False,
        lambda: [calls(call("search_materials", {"keyword": "面粉"}, "c1")), answer("好")],
        "staff",
    ),
    "new conversation, one warehouse's person": (False, lambda: [answer("好")], "coldstore"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("messages", type=int, nargs="?", default=20)
    parser.add_argument("--database", default="iai_bench_round_trips")
    args = parser.parse_args()
    admin = create_engine(
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres", isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{args.database}"'))
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{args.database}"
    try:
        build_seeded(url)
        app = create_app(config_for_tests(url))
        with app.app_context():
            print(
                f"{'message':<42}  round trips  statements (BEGIN, COMMIT too)   a message, of {args.messages}"
            )
            for kind, (existing, script, who) in KINDS.items():
                staff = user_named(who)
                use(app, ScriptedProvider(*[step for _ in range(args.messages + 1) for step in script()]))
                conversation = _message(staff, None)  # warm: the user, the tool settings, prepared statements
                db.session.commit()  # the session's connection back in the pool: traced from its next checkout
                with counted(db.engine) as trips:
                    for _ in range(args.messages):
                        conversation = _message(staff, conversation if existing else None)
                db.session.commit()
                statements = trips.sent["Bind"] + trips.sent["Query"]  # a statement each, prepared or not
                n = args.messages
                print(f"{kind:<42}  {trips.round_trips / n:>11.2f}  {statements / n:>10.2f}")
        let_go(app)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)'))
        admin.dispose()


def _message(staff, conversation: str | None) -> str:
    """One message through the intake and the loop; returns its conversation's id."""
    turn = manager().prepare_message(db.session, staff, "面粉还有多少", conversation)
    list(manager().run(db.session, turn))
    return turn.conversation_id


if __name__ == "__main__":
    main()
