"""A chat message's round trips to PostgreSQL: its two write transactions (the intake, the
ending) each sent as one pipeline, BEGIN, statements and COMMIT together (database.direct_write),
and what they store the same as before. Counted in libpq's trace of the protocol
(tests/support/round_trips.py), which the machine's load does not move."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Conversation
from tests.support.factories import user_named
from tests.support.round_trips import counted
from tests.support.scripted import ScriptedProvider, answer, use


def _postgresql_only():
    if db.engine.dialect.name != "postgresql":
        pytest.skip("round trips to PostgreSQL")


def _message(staff, text: str) -> str:
    """One message in a new conversation, through the intake and the loop; returns the answer's id."""
    turn = manager().prepare_message(db.session, staff, text, None)
    list(manager().run(db.session, turn))
    return turn.message_id


@pytest.mark.parametrize("who", ["staff", "coldstore"])
def test_a_message_makes_two_round_trips_or_fewer(app, who):
    """A message that the model answers at once: the intake (a new conversation: its row, the
    question and the answer, the user's warehouses) and the ending (the model call's usage, the
    answer's end). Each was BEGIN, its statements one by one and COMMIT, each a wait: 9 in all;
    then a pipeline each, waiting for the warehouses (and, for a person with warehouse codes, their
    ids) and for the ending's count before the COMMIT: 4, 5 with codes. Now each one wait, at its
    COMMIT: the warehouses and the ending's count are answered with it (sites.of_user_at_commit,
    answer_store.END_ANSWER_OR_ADD_TOKENS). `coldstore` works in WH02 only."""
    _postgresql_only()
    use(app, ScriptedProvider(*[answer("好")] * 2))
    with app.app_context():
        staff = user_named(who)
        _message(staff, "你好")  # warm: the user, the tool settings, the statements' cache
        db.session.commit()  # the session's connection back in the pool: traced from its next checkout
        with counted(db.engine) as trips:
            answer_id = _message(staff, "面粉还有多少")
        db.session.commit()
        assert trips.round_trips <= 2, trips
        with db.engine.connect() as conn:  # straight from the database
            stored = conn.execute(
                select(ChatMessage.role, ChatMessage.status, ChatMessage.content, Conversation.user_id)
                .join(Conversation)
                .where(ChatMessage.conversation_id == select(ChatMessage.conversation_id)
                       .where(ChatMessage.id == answer_id).scalar_subquery())
                .order_by(ChatMessage.created_seq)
            ).all()  # fmt: skip
        assert [tuple(r) for r in stored] == [
            ("user", "completed", "面粉还有多少", staff.id),
            ("assistant", "completed", "好", staff.id),
        ]


def test_an_error_found_only_at_the_commit_stores_nothing_and_no_connection_stays_in_autocommit(app):
    """On PostgreSQL the direct write's statements are queued in a pipeline: a duplicate key is
    told at the COMMIT, not at its INSERT. It is still SQLAlchemy's IntegrityError, nothing of the
    block is stored, and the connection goes back to the pool out of the autocommit the pipeline
    needed (else the next Session on it would commit every statement on its own). On SQLite the
    same block fails at the INSERT."""
    from sqlalchemy import event, exc

    from inventory_ai.assistant import answer_store
    from inventory_ai.database import direct_write, insert_rows

    with app.app_context():
        staff = user_named("staff")
        rows = answer_store.intake(staff.id, "hello", "en", None)
        returned = []

        def checkin(dbapi_connection, _record):
            returned.append(getattr(dbapi_connection, "autocommit", False))

        event.listen(db.engine, "checkin", checkin)
        try:
            with pytest.raises(exc.IntegrityError), direct_write(db.session) as written:
                answer_store.write_intake(written, rows, 0)
                insert_rows(written, ChatMessage, [rows.question], made_filled=True)  # its id again
        finally:
            event.remove(db.engine, "checkin", checkin)
        assert returned and not any(returned)
        with db.engine.connect() as conn:
            assert conn.execute(select(Conversation.id)).all() == []
            assert conn.execute(select(ChatMessage.id)).all() == []
        # The pool's connections are transactional again: a Session's rollback undoes its write.
        answer_store.write_intake(db.session, answer_store.intake(staff.id, "hi", "en", None), 0)
        db.session.rollback()
        with db.engine.connect() as conn:
            assert conn.execute(select(ChatMessage.id)).all() == []


def test_an_answer_ended_elsewhere_is_told_and_its_tokens_are_added(app):
    """The ending's UPDATE matches no running answer (a stale sweep ended it first): the tokens go
    on with an UPDATE of their own in the same transaction (on PostgreSQL decided in the same
    statement, END_ANSWER_OR_ADD_TOKENS), and the caller is told once it has committed."""
    from sqlalchemy import update

    from inventory_ai.assistant import answer_store
    from inventory_ai.database import direct_write

    with app.app_context():
        staff = user_named("staff")
        rows = answer_store.intake(staff.id, "hello", "en", None)
        with direct_write(db.session) as written:
            answer_store.write_intake(written, rows, 0)
        db.session.execute(
            update(ChatMessage).where(ChatMessage.id == rows.answer["id"]).values(status="failed")
        )
        db.session.commit()
        message = db.session.get(ChatMessage, rows.answer["id"])
        with direct_write(db.session) as written:
            told = answer_store.ending(written, message, "completed", "好", None, "m", 3, 4)
        assert told() is False
        with db.engine.connect() as conn:
            stored = conn.execute(
                select(ChatMessage.status, ChatMessage.input_tokens, ChatMessage.output_tokens).where(
                    ChatMessage.id == rows.answer["id"]
                )
            ).one()
        assert tuple(stored) == ("failed", 3, 4)
