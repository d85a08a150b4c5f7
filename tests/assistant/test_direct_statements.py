"""The loop's statements sent straight through the DBAPI (statements.py, database.insert_rows): what
they store is what the ORM stores for the same values, their errors are SQLAlchemy's, and listeners
of the engine's cursor events see them. On SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import event, exc, select

from inventory_ai.assistant import answer_store
from inventory_ai.database import as_written, begin_write, insert_rows
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, ChatMessage, Conversation, ModelCall, utcnow
from tests.support.factories import user_named


def _stored(model, ids: list) -> list[tuple]:
    """The rows as the database returns them, every column but the id."""
    columns = [c for c in model.__table__.columns if c.name != "id"]
    rows = db.session.execute(select(*columns).where(model.__table__.c.id.in_(ids)).order_by(model.id))
    return [tuple(row) for row in rows]


def test_rows_written_directly_are_stored_as_the_orm_stores_them(app):
    with app.app_context():
        user = user_named("staff")
        now = utcnow()
        values = [
            dict(created_at=now, user_id=user.id, role="warehouse_staff", action="tool_call", tool_name="noop",
                 arguments={"名称": "面粉", "n": [1, 2.5, None]}, status="success", duration_ms=3),
            dict(created_at=now, user_id=user.id, role="warehouse_staff", action="tool_call", tool_name="noop",
                 arguments=None, status="denied", detail="line\nnext"),
        ]  # fmt: skip
        by_orm = [AuditEvent(**v) for v in values]
        db.session.add_all(by_orm)
        db.session.commit()
        begin_write(db.session)
        direct = insert_rows(db.session, AuditEvent, [dict(v) for v in values])
        conversation = answer_store.intake(user.id, "hello", "en", None).conversation
        conversation |= {"created_at": now, "updated_at": now}
        insert_rows(db.session, Conversation, [conversation])
        db.session.commit()
        direct_ids = [e.id for e in db.session.scalars(select(AuditEvent).order_by(AuditEvent.id))][-2:]
        assert _stored(AuditEvent, [e.id for e in by_orm]) == _stored(AuditEvent, direct_ids)
        assert [row["arguments"] for row in direct] == [values[0]["arguments"], None]
        assert db.session.get(Conversation, conversation["id"]).created_at == now


def _asked(user):
    """A question and its running answer, written and committed as the intake writes them."""
    rows = answer_store.intake(user.id, "hello", "en", None)
    begin_write(db.session)
    answer_store.write_intake(db.session, rows, 0)
    db.session.commit()
    return rows


def test_ids_come_back_for_one_row_and_for_several(app):
    with app.app_context():
        user = user_named("staff")
        rows = _asked(user)
        begin_write(db.session)
        calls = [
            {
                "message_id": rows.answer["id"],
                "user_id": user.id,
                "provider": "stub",
                "model": m,
                "status": "ok",
            }
            for m in ("a", "b", "c")
        ]
        [one] = insert_rows(db.session, ModelCall, calls[:1], with_ids=True)
        several = insert_rows(db.session, ModelCall, calls[1:], with_ids=True)
        db.session.commit()
        for row in [one, *several]:
            assert db.session.get(ModelCall, row["id"]).model == row["model"]
        assert len({one["id"], *(r["id"] for r in several)}) == 3
        assert db.session.get(ChatMessage, rows.question["id"]).content == "hello"


def test_errors_are_sqlalchemys_and_listeners_see_the_statements(app):
    with app.app_context():
        user = user_named("staff")
        seen = []

        def listen(_conn, _cursor, statement, *_rest):
            seen.append(statement.split(" (")[0])

        rows = answer_store.intake(user.id, "hello", "en", None)
        event.listen(db.engine, "before_cursor_execute", listen)
        try:
            begin_write(db.session)
            answer_store.write_intake(db.session, rows, 0)
            db.session.commit()
        finally:
            event.remove(db.engine, "before_cursor_execute", listen)
        assert "INSERT INTO conversations" in seen and "INSERT INTO messages" in seen
        begin_write(db.session)
        with pytest.raises(exc.IntegrityError):  # the same message id again
            insert_rows(db.session, ChatMessage, [rows.question])
        db.session.rollback()
        assert db.session.get(ChatMessage, rows.question["id"]).content == "hello"


def test_a_value_a_column_refuses_is_a_statement_error(app):
    """As Core: a value the column's type cannot convert is SQLAlchemy's StatementError, naming the
    statement, not a bare TypeError from the type's converter."""
    with app.app_context():
        user = user_named("staff")
        conversation = answer_store.intake(user.id, "hello", "en", None).conversation
        conversation |= {"created_at": "not a date", "updated_at": utcnow()}
        begin_write(db.session)
        with pytest.raises(exc.StatementError) as raised:
            insert_rows(db.session, Conversation, [conversation])
        db.session.rollback()
        assert "INSERT INTO conversations" in str(raised.value)


def test_a_dropped_connection_is_not_reused_nor_the_pools_older_ones(app):
    """As Core on a disconnect: the failed connection is thrown away, and so are the idle ones the
    pool opened before (a server restart drops them all): none of them is handed out again."""
    with app.app_context():
        user = user_named("staff")
        db.session.commit()
        idle = [db.engine.raw_connection() for _ in range(2)]
        older = [c.dbapi_connection for c in idle]
        for pooled in idle:
            pooled.close()
        conversation = answer_store.intake(user.id, "hello", "en", None).conversation
        conversation |= {"created_at": utcnow(), "updated_at": utcnow()}
        begin_write(db.session)
        db.session.connection().connection.dbapi_connection.close()  # the database "drops" it
        with pytest.raises(exc.DBAPIError) as raised:
            insert_rows(db.session, Conversation, [conversation])
        assert raised.value.connection_invalidated
        db.session.rollback()
        again = [db.engine.raw_connection() for _ in range(2)]
        try:
            assert not any(c.dbapi_connection is old for c in again for old in older)
        finally:
            for pooled in again:
                pooled.close()


def test_values_written_directly_are_known_and_pending_changes_stay_pending(app):
    """database.as_written: what the loop's own UPDATE wrote is on the object with nothing to flush;
    a change the object still had to flush is kept, and flushed."""
    with app.app_context():
        user = user_named("staff")
        rows = _asked(user)
        answer = db.session.get(ChatMessage, rows.answer["id"])
        as_written(answer, {"status": "completed"})
        assert answer.status == "completed" and answer not in db.session.dirty
        answer.content = "changed here"
        as_written(answer, {"input_tokens": 7})
        assert answer.input_tokens == 7 and answer in db.session.dirty
        db.session.commit()
        stored = db.session.execute(
            select(ChatMessage.content, ChatMessage.input_tokens).where(ChatMessage.id == answer.id)
        ).one()
        assert tuple(stored) == ("changed here", 0)  # only the pending change was written by the ORM
