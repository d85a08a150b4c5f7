"""Reads that a direct write needs only once committed (statements.Prepared.rows_at_commit): a new
conversation's intake reads the user's warehouses, and the ending learns whether it ended the answer.
On PostgreSQL they are queued inside the pipelined transaction and answered with its COMMIT
(the warehouses and their ids in one statement; the ending's two UPDATEs decided in one); elsewhere
they run as before. Either way what is read and stored is the same, a failure stores nothing, and
an ending that races a stop or a sweep has the outcome the two UPDATEs in turn had."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import String, bindparam, cast, create_engine, exc, func, null, select, text, update

from inventory_ai.assistant import answer_store
from inventory_ai.assistant.extension import manager
from inventory_ai.database import direct_write
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, Conversation, ModelCall, User, Warehouse
from inventory_ai.services import sites
from inventory_ai.statements import Prepared
from tests.support.factories import UserFactory, user_named
from tests.support.scripted import ScriptedProvider, answer, use


def _postgresql_only():
    if db.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's pipeline and row locks")


@pytest.mark.parametrize(
    "stored", ["json null", "sql null", [], ["WH02"], ["WH02", "WH99"], ["WH03", "WH01"], ["WH99"]]
)
def test_a_persons_warehouses_read_at_the_commit_are_those_the_two_reads_give(app, stored):
    """JSON null and SQL NULL are every warehouse; an empty list none; a code no warehouse has is
    left out. The same from of_user, from of_user_at_commit in a direct write, and from the codes
    read then looked up (sites.codes_of, sites.of_codes: the two statements the intake sent)."""
    with app.app_context():
        person = UserFactory()
        value = {"json null": None, "sql null": null()}[stored] if isinstance(stored, str) else stored
        db.session.execute(update(User).where(User.id == person.id).values(warehouses=value))
        db.session.commit()
        as_text = db.session.scalar(select(cast(User.warehouses, String)).where(User.id == person.id))
        if stored == "json null":
            assert as_text == "null"
        elif stored == "sql null":
            assert as_text is None
        db.session.expire_all()
        person = db.session.get(User, person.id)
        expected = sites.of_codes(db.session, sites.codes_of(db.session, person))
        db.session.commit()
        assert sites.of_user(db.session, person) == expected
        db.session.commit()
        with direct_write(db.session) as direct:
            at_commit = sites.of_user_at_commit(direct, person)
        assert at_commit() == expected
        if isinstance(stored, list):
            assert expected.codes == {c for c in stored if c != "WH99"}
        else:
            assert expected.everywhere


def test_no_such_person_is_every_warehouse_as_before(app):
    with app.app_context():
        assert sites.of_user(db.session, 10**6) == sites.ALL


def test_a_warehouses_read_that_fails_in_the_pipeline_stores_nothing(app, monkeypatch):
    """The read is queued after the intake's INSERTs, before its COMMIT: its error at the server
    stops the pipeline there, the COMMIT is skipped, and nothing of the intake is stored."""
    _postgresql_only()
    failing = Prepared(
        select(User.warehouses, Warehouse.id, Warehouse.code).where(
            User.id == bindparam("user"), func.sqrt(-1 * User.id) > 0
        )
    )
    use(app, ScriptedProvider(answer("好")))
    with app.app_context():
        staff = user_named("staff")
        reading = sites._SITES_OF
        monkeypatch.setattr(sites, "_SITES_OF", failing)
        with pytest.raises(exc.DBAPIError):
            manager().prepare_message(db.session, staff, "面粉", None)
        with db.engine.connect() as conn:  # straight from the database
            assert conn.execute(select(Conversation.id)).all() == []
            assert conn.execute(select(ChatMessage.id)).all() == []
        monkeypatch.setattr(sites, "_SITES_OF", reading)
        turn = manager().prepare_message(db.session, staff, "面粉", None)
        list(manager().run(db.session, turn))
        assert db.session.get(ChatMessage, turn.message_id).status == "completed"


def _running_answer(user) -> str:
    rows = answer_store.intake(user.id, "hello", "en", None)
    with direct_write(db.session) as written:
        answer_store.write_intake(written, rows, 0)
    return rows.answer["id"]


def _stored(answer_id: str) -> tuple | None:
    with db.engine.connect() as conn:  # straight from the database
        row = conn.execute(
            select(
                ChatMessage.status, ChatMessage.content, ChatMessage.model, ChatMessage.input_tokens,
                ChatMessage.output_tokens,
            ).where(ChatMessage.id == answer_id)
        ).one_or_none()  # fmt: skip
    return None if row is None else tuple(row)


def _end(answer_id: str, status: str = "completed", more=(3, 4)) -> bool:
    message = db.session.get(ChatMessage, answer_id)
    with direct_write(db.session) as written:
        told = answer_store.ending(written, message, status, "好", None, "m", *more)
    return told()


def test_a_running_answer_is_ended_and_its_object_says_what_was_stored(app):
    with app.app_context():
        answer_id = _running_answer(user_named("staff"))
        assert _end(answer_id) is True
        assert _stored(answer_id) == ("completed", "好", "m", 3, 4)
        message = db.session.get(ChatMessage, answer_id)  # the session's own object, not read again
        assert (message.status, message.content, message.input_tokens, message.output_tokens) == (
            "completed", "好", 3, 4,
        )  # fmt: skip


def test_an_answer_deleted_meanwhile_ends_nothing_and_stores_nothing(app):
    with app.app_context():
        answer_id = _running_answer(user_named("staff"))
        message = db.session.get(ChatMessage, answer_id)
        with db.engine.begin() as conn:
            conn.execute(ChatMessage.__table__.delete().where(ChatMessage.id == answer_id))
        with direct_write(db.session) as written:
            told = answer_store.ending(written, message, "completed", "好", None, "m", 3, 4)
        assert told() is False
        assert _stored(answer_id) is None


def test_an_ending_the_database_refuses_stores_nothing_of_its_write(app):
    """A status the table's check refuses: the ending's write fails (on PostgreSQL at its COMMIT's
    answer), its model call's row is not stored, and the answer is as it was."""
    from inventory_ai.assistant.model_chain import ModelUsage

    with app.app_context():
        staff = user_named("staff")
        answer_id = _running_answer(staff)
        message = db.session.get(ChatMessage, answer_id)
        used = ModelUsage(answer_id, staff.id, "scripted", "m", input_tokens=3, output_tokens=4)
        with pytest.raises(exc.IntegrityError), direct_write(db.session) as written:
            answer_store.usage(written, message, [used], totals=False)
            answer_store.ending(written, message, "no such status", "好", None, "m", 3, 4)
        assert _stored(answer_id) == ("running", "", None, 0, 0)
        with db.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(ModelCall)).scalar() == 0


def _held_then(app, answer_id: str, change: str) -> tuple[bool, tuple]:
    """Another transaction changes the answer's row and holds its lock while the ending's UPDATE
    waits for it, then commits: what the ending told and what is stored."""
    other = create_engine(db.engine.url)
    told: list = []

    def ending():
        with app.app_context():
            told.append(_end(answer_id, more=(3, 4)))

    try:
        with other.connect() as holder:
            holder.execute(text(change), {"id": answer_id})  # the row locked, not committed
            waiter = threading.Thread(target=ending)
            waiter.start()
            deadline = time.monotonic() + 20
            with other.connect() as watcher:
                while not watcher.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar():
                    assert time.monotonic() < deadline, "the ending never waited for the row's lock"
                    time.sleep(0.05)
            holder.commit()
            waiter.join(20)
    finally:
        other.dispose()
    assert told, "the ending did not finish"
    return told[0], _stored(answer_id)


def test_an_ending_that_waits_for_a_stop_committed_meanwhile_adds_only_its_tokens(app):
    """A stop (or a sweep, or another host) ends the answer while the ending waits for its row:
    the ending ends nothing, says so, and its tokens go on the row as that one left it."""
    _postgresql_only()
    with app.app_context():
        answer_id = _running_answer(user_named("staff"))
        db.session.commit()
        told, stored = _held_then(
            app, answer_id,
            "UPDATE messages SET status = 'cancelled', content = 'stopped', input_tokens = 10 WHERE id = :id",
        )  # fmt: skip
        assert told is False
        assert stored == ("cancelled", "stopped", None, 13, 4)


def test_an_ending_that_waits_for_a_heartbeat_committed_meanwhile_still_ends_the_answer(app):
    """The row changed meanwhile but the answer is still running: the ending ends it, its tokens
    added to what that one committed."""
    _postgresql_only()
    with app.app_context():
        answer_id = _running_answer(user_named("staff"))
        db.session.commit()
        told, stored = _held_then(
            app, answer_id, "UPDATE messages SET heartbeat_at = now(), input_tokens = 10 WHERE id = :id"
        )
        assert told is True
        assert stored == ("completed", "好", "m", 13, 4)
