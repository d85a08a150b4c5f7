"""A statement the loop sends straight through the DBAPI (statements.py) is traced as Core's are:
one that fails is a span with an ERROR status, not a span that looks like a success."""

from __future__ import annotations

import pytest
from sqlalchemy import exc

from inventory_ai import tracing
from inventory_ai.assistant import answer_store
from inventory_ai.database import begin_write, insert_rows
from inventory_ai.extensions import db
from inventory_ai.models import Conversation, utcnow
from tests.support.factories import user_named
from tests.support.traces import recording


def test_a_direct_statement_that_fails_is_an_error_span(app_with):
    with recording() as recorded:
        app = app_with()
        with app.app_context():
            user = user_named("staff")
            conversation = answer_store.intake(user.id, "hello", "en", None).conversation
            conversation |= {"created_at": utcnow(), "updated_at": utcnow()}
            begin_write(db.session)
            insert_rows(db.session, Conversation, [dict(conversation)])
            db.session.commit()
            recorded.clear()
            # A client span is kept only inside a story (tracing.in_stories): a request or answer.
            with tracing.SWITCH.get_tracer("tests").start_as_current_span("story"):
                begin_write(db.session)
                with pytest.raises(exc.IntegrityError):
                    insert_rows(db.session, Conversation, [dict(conversation)])  # the same id again
                db.session.rollback()
            inserts = [s for s in recorded.spans() if s.name.startswith("INSERT")]
    assert len(inserts) == 1, [s.name for s in recorded.spans()]
    assert inserts[0].status == "ERROR"
