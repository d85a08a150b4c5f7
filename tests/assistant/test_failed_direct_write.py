"""A round or an ending whose direct write fails (database.direct_write): what the answer says of
itself afterwards is what the database holds, never the values the failed block put on it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from inventory_ai.assistant.extension import manager
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, ModelCall
from inventory_ai.services import audit, usage
from tests.support.factories import user_named
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


def _stored_tokens(message_id: str) -> tuple[int, int]:
    with db.engine.connect() as conn:  # straight from the database, not the session's objects
        row = conn.execute(
            select(ChatMessage.input_tokens, ChatMessage.output_tokens).where(ChatMessage.id == message_id)
        ).one()
    return tuple(row)


def _a_round_whose_write_fails(app, monkeypatch) -> None:
    """A search round, then an answer; the round's audit write (inside its direct write) fails."""
    use(app, ScriptedProvider(calls(call("search_materials", {"keyword": "面粉"}, "c1")), answer("好")))
    failing = audit.write

    def write(where, events):
        if events and events[0].get("action") == "tool_call":
            raise RuntimeError("the round's audit write failed")
        return failing(where, events)

    monkeypatch.setattr(audit, "write", write)


def test_a_round_that_fails_to_store_leaves_only_stored_tokens_on_the_answer(app, monkeypatch):
    """The round's write fails after add_tokens put its tokens on the answer (as_written, straight
    into the object's dict). The direct transaction rolls back, but the Session has no transaction
    to roll back (direct_write committed it), so session.rollback() in _guarded expires nothing and
    end_broken's session.get returns the object with tokens the database never stored. The answer
    is then ended with those phantom tokens on it, and the reply says them."""
    _a_round_whose_write_fails(app, monkeypatch)
    with app.app_context():
        turn = manager().prepare_message(db.session, user_named("staff"), "面粉", None)
        list(manager().run(db.session, turn))
        message = db.session.get(ChatMessage, turn.message_id)
        assert message.status == "failed"
        assert (message.input_tokens, message.output_tokens) == _stored_tokens(turn.message_id)


def test_a_round_whose_connection_the_server_ends_leaves_the_answer_failed_and_consistent(app, client, auth):
    """PostgreSQL ends the direct write's connection just before the round's INSERT: the answer
    ends failed, nothing of the round is stored, and what the reply says of the answer's tokens is
    what the database holds."""
    from sqlalchemy import create_engine, event, text

    if db.engine.dialect.name != "postgresql":
        pytest.skip("ends PostgreSQL connections")
    admin = create_engine(db.engine.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    left = [1]

    def before(conn, _cursor, statement, *_args):
        if left[0] and statement.lstrip().upper().startswith("INSERT INTO TOOL_ROUNDS"):
            left[0] = 0
            with admin.connect() as c:
                c.execute(
                    text("SELECT pg_terminate_backend(:pid, 5000)"),
                    {"pid": conn.connection.dbapi_connection.info.backend_pid},
                )

    use(app, ScriptedProvider(calls(call("search_materials", {"keyword": "面粉"}, "c1")), answer("好")))
    auth.login("staff")
    event.listen(db.engine, "before_cursor_execute", before)
    try:
        response = client.post("/api/v1/chat", json={"message": "面粉"})
    finally:
        event.remove(db.engine, "before_cursor_execute", before)
        admin.dispose()
    assert left == [0]
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.json
    assert body["status"] == "failed"
    with db.engine.connect() as conn:
        stored = conn.execute(
            select(ChatMessage.status, ChatMessage.input_tokens, ChatMessage.output_tokens).where(
                ChatMessage.id == body["message_id"]
            )
        ).one()
    assert stored[0] == "failed"
    assert (body["usage"]["input_tokens"], body["usage"]["output_tokens"]) == (stored[1], stored[2])


def test_a_direct_write_whose_commit_fails_raises_it_as_sqlalchemy_does_and_stores_nothing(app):
    """The COMMIT itself refused (a foreign key checked at commit): the caller gets SQLAlchemy's
    IntegrityError, as from a Session's commit, and no row of the block is stored."""
    from sqlalchemy import exc, func

    from inventory_ai.database import direct_write
    from inventory_ai.models import ToolRound
    from inventory_ai.statements import send

    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's deferred foreign keys")
    with app.app_context():
        with pytest.raises(exc.IntegrityError), direct_write(db.session) as written:
            send(written, "PRAGMA defer_foreign_keys = ON")
            send(
                written,
                "INSERT INTO tool_rounds (message_id, position, started_at, duration_ms) "
                "VALUES ('no such answer', 1, '2026-11-27 10:00:00', 0)",
            )
        assert db.session.scalar(select(func.count()).select_from(ToolRound)) == 0


def test_a_new_conversations_intake_that_fails_stores_nothing_and_the_next_message_goes_in(app, monkeypatch):
    """A new conversation's question is written outside the Session (database.direct_write): a
    failure after its INSERTs (here the warehouses' read) rolls all of it back, and the session
    takes the next message as if nothing had happened."""
    from inventory_ai.assistant import intake
    from inventory_ai.models import Conversation

    reading = intake.sites.of_user_at_commit

    def of_user_at_commit(where, user):
        raise RuntimeError("the warehouses' read failed")

    use(app, ScriptedProvider(answer("好")))
    with app.app_context():
        staff = user_named("staff")
        monkeypatch.setattr(intake.sites, "of_user_at_commit", of_user_at_commit)
        with pytest.raises(RuntimeError):
            manager().prepare_message(db.session, staff, "面粉", None)
        with db.engine.connect() as conn:  # straight from the database
            assert conn.execute(select(Conversation.id)).all() == []
            assert conn.execute(select(ChatMessage.id)).all() == []
        monkeypatch.setattr(intake.sites, "of_user_at_commit", reading)
        turn = manager().prepare_message(db.session, staff, "面粉", None)
        list(manager().run(db.session, turn))
        assert db.session.get(ChatMessage, turn.message_id).status == "completed"


def test_a_round_that_fails_to_store_keeps_its_model_calls_for_the_daily_budget(app, monkeypatch):
    """The round's write fails after its model call's usage row was put in it: that row is rolled
    back with the round, so the answer's ending writes it instead. The model's tokens were spent
    whatever the database did, and the daily token budget (usage.tokens_today) counts them."""
    _a_round_whose_write_fails(app, monkeypatch)
    with app.app_context():
        staff = user_named("staff")
        turn = manager().prepare_message(db.session, staff, "面粉", None)
        list(manager().run(db.session, turn))
        assert db.session.get(ChatMessage, turn.message_id).status == "failed"
        with db.engine.connect() as conn:  # straight from the database
            stored = conn.execute(
                select(ModelCall.input_tokens).where(ModelCall.message_id == turn.message_id)
            )
            assert [tokens for (tokens,) in stored] == [10]  # the tool call's reply (testing.calls)
        assert usage.tokens_today(db.session, staff.id) == 10 + 5
        assert _stored_tokens(turn.message_id) == (10, 5)
