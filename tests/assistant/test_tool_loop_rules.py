"""ToolExecutionManager with a scripted model: every rule of the loop, deterministic."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from inventory_ai.assistant import registry as registry_module
from inventory_ai.assistant.events import ConfirmationRequired, Delta, Done, ToolResultEvent
from inventory_ai.assistant.extension import decisions, manager
from inventory_ai.assistant.providers.base import ProviderError
from inventory_ai.assistant.read_deadlines import stopped_at
from inventory_ai.assistant.tools.base import NotFound as ToolNotFound
from inventory_ai.assistant.tools.base import ToolExecutor
from inventory_ai.assistant.types import ModelReply
from inventory_ai.change_markers import ChangeMarker
from inventory_ai.errors import Conflict, NotFound
from inventory_ai.extensions import db
from inventory_ai.models import AuditEvent, ChatMessage, Intent, Material, ModelCall, StockLevel, ToolSetting
from tests.support import scripted
from tests.support.scripted import ScriptedProvider, answer, call, calls, use


class NoArguments(ToolExecutor):
    """A tool made for one test, taking no arguments: its name and what it does are its own."""

    labels = help = ("测试", "test")
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}


def run(app, username: str, text: str, conversation_id: str | None = None):
    user = _user(username)
    turn = manager().prepare_message(db.session, user, text, conversation_id)
    events = list(manager().run(db.session, turn))
    return turn, events, db.session.get(ChatMessage, turn.message_id)


def _user(username):
    from inventory_ai.models import User

    return db.session.query(User).filter_by(username=username).one()


def tool_messages(request):
    return [m for m in request.messages if m.role == "tool"]


def content(request, index=-1) -> dict:
    return json.loads(tool_messages(request)[index].content)


def called_once(app, tool: ToolExecutor, reply: str = "done"):
    """`tool` (taking no arguments) registered and called once by the scripted model, which then
    answers `reply`: the model (what it was told of the call: `content(model.requests[1])`) and the
    answer's message."""
    manager().registry.register(tool)
    model = use(app, ScriptedProvider(calls(call(tool.name, {})), answer(reply)))
    _, _, message = run(app, "staff", "go")
    return model, message


def m001_level(session) -> Decimal:
    session.expire_all()
    return session.scalar(select(func.sum(StockLevel.quantity)).join(Material).where(Material.code == "M001"))


# --- the basic shapes ------------------------------------------------------------------------


def test_answer_without_tools(app):
    model = use(app, ScriptedProvider(answer("你好！")))
    _, events, message = run(app, "staff", "你好")
    assert message.status == "completed" and message.content == "你好！"
    assert [type(e) for e in events] == [Delta, Done]
    offered = {t.name for t in model.requests[0].tools}
    assert "search_materials" in offered and "create_new_intent" not in offered
    assert model.requests[0].messages[0].role == "system"
    assert model.requests[0].messages[-1].content == "你好"


def test_one_tool_round_goes_back_as_a_tool_message(app):
    model = use(
        app,
        ScriptedProvider(
            calls(call("search_materials", {"keyword": "面粉"}, "call_1"), text="我来查一下。"),
            answer("找到高筋面粉和低筋面粉。"),
        ),
    )
    _, events, message = run(app, "staff", "帮我查找面粉原料")
    assert message.status == "completed" and message.content == "找到高筋面粉和低筋面粉。"
    second = model.requests[1]
    asked = [m for m in second.messages if m.role == "assistant"][-1]
    assert asked.content == "我来查一下。"
    assert asked.tool_calls[0].id == "call_1" and json.loads(asked.tool_calls[0].arguments) == {
        "keyword": "面粉"
    }
    result = content(second)
    assert tool_messages(second)[0].tool_call_id == "call_1"
    assert result["materials"][0]["code"] == "M001"
    kinds = [e.kind for e in events]
    assert kinds.index("tool_call_start") < kinds.index("tool_result") < kinds.index("done")
    stored = message.rounds[0]
    assert stored.assistant_response == "我来查一下。" and stored.calls[0].status == "success"
    assert stored.calls[0].duration_ms >= 0


def test_user_message_is_stored_before_the_model_is_called(app):
    use(app, ScriptedProvider(ProviderError("boom", code="InternalError")))
    turn, events, message = run(app, "staff", "帮我查找面粉原料")
    assert message.status == "failed" and message.error_code == "InternalError"
    user_message = db.session.scalar(
        select(ChatMessage).where(
            ChatMessage.conversation_id == turn.conversation_id, ChatMessage.role == "user"
        )
    )
    assert user_message.content == "帮我查找面粉原料"
    assert events[-1].kind == "done" and any(e.kind == "error" for e in events)
    assert "保存" in message.content  # the user is told the message is kept


# --- refusing what must not run ---------------------------------------------------------------


def test_forged_tool_name_is_refused_and_never_executed(app):
    model = use(
        app,
        ScriptedProvider(
            calls(
                call(
                    "create_new_intent", {"name": "evil", "keywords": ["x"], "tool_name": "search_materials"}
                )
            ),
            answer("ok"),
        ),
    )
    run(app, "staff", "add an intent")
    error = content(model.requests[1])["error"]
    assert error["type"] == "PermissionDenied"
    assert "search_materials" in error["message"]  # the model is told what it has
    assert db.session.scalar(select(Intent).where(Intent.name == "evil")) is None


def test_hallucinated_tool_is_refused(app):
    model = use(app, ScriptedProvider(calls(call("delete_all_stock", {})), answer("sorry")))
    _, _, message = run(app, "staff", "wipe it")
    assert content(model.requests[1])["error"]["type"] == "PermissionDenied"
    assert message.rounds[0].calls[0].status == "error"


def test_arguments_that_are_not_json_are_returned_with_the_expected_fields(app):
    model = use(app, ScriptedProvider(calls(call("search_materials", "{keyword: 面粉")), answer("retry")))
    run(app, "staff", "flour")
    error = content(model.requests[1])["error"]
    assert error["type"] == "InvalidArguments" and "not valid JSON" in error["message"]
    assert "keyword?: string" in error["message"]  # optional: a category or warehouse is listed without one


def test_schema_errors_are_all_listed(app):
    model = use(
        app,
        ScriptedProvider(
            calls(call("get_material_detail", {"limit": 500, "colour": "red"})), answer("retry")
        ),
    )
    run(app, "staff", "flour")
    message = content(model.requests[1])["error"]["message"]
    assert "'material' is a required property" in message
    assert "'colour', 'limit' were unexpected" in message


def test_a_value_out_of_its_range_is_named_with_its_bound(app):
    model = use(
        app,
        ScriptedProvider(calls(call("search_materials", {"keyword": "面粉", "limit": 500})), answer("retry")),
    )
    run(app, "staff", "flour")
    assert "limit: 500 is greater than the maximum of 50" in content(model.requests[1])["error"]["message"]


def test_a_tool_that_crashes_becomes_a_clean_error(app):
    class Crashing(NoArguments):
        name = "crashing_tool"
        description = "crashes"

        def execute(self, arguments, context):
            raise RuntimeError("secret path /etc/passwd and key sk-abcdefghijklmnop")

    model, _ = called_once(app, Crashing(), "sorry")
    text = tool_messages(model.requests[1])[0].content
    assert json.loads(text)["error"]["type"] == "ExecutionFailed"
    assert "/etc/passwd" not in text and "sk-" not in text and "Traceback" not in text


def test_a_tool_that_times_out_is_reported_and_the_loop_goes_on(app):
    class Slow(NoArguments):
        name = "slow_tool"
        description = "slow"
        timeout_seconds = 0.2

        def execute(self, arguments, context):
            time.sleep(2)
            return {"late": True}

    started = time.monotonic()
    model, message = called_once(app, Slow(), "it was slow")
    assert time.monotonic() - started < 1.5
    assert content(model.requests[1])["error"]["type"] == "Timeout"
    assert message.status == "completed"


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
# Millions of SQLite steps: a deadline's progress handler is called during it several times.
LONG_BUT_FINITE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT max(x) FROM c"
)


class EndlessQuery(NoArguments):
    """A read whose query never ends on its own (the same SQL on SQLite and PostgreSQL)."""

    name = "endless_query"
    description = "never finishes"
    timeout_seconds = 0.3

    def __init__(self, bounded: bool):
        self.bounded = bounded
        self.ended = threading.Event()
        self.error = None
        self.thread = None

    def execute(self, arguments, context):
        self.thread = threading.current_thread()
        try:
            return {"max": context.session.execute(text(ENDLESS)).scalar()}
        except Exception as exc:
            self.error = exc
            raise
        finally:
            self.ended.set()


@pytest.mark.parametrize("bounded", [True, False], ids=["in the asking thread", "in a thread of its own"])
def test_a_read_past_its_timeout_is_stopped_by_the_database_and_the_next_one_works(app, bounded):
    tool = EndlessQuery(bounded)
    started = time.monotonic()
    model, message = called_once(app, tool, "it was slow")
    assert time.monotonic() - started < 3
    assert content(model.requests[1])["error"]["type"] == "Timeout"
    assert message.status == "completed"
    # The query itself was stopped, not only given up on: a read left running holds a connection
    # (PostgreSQL) or keeps a snapshot open (SQLite) for ever.
    assert tool.ended.wait(3) and tool.error is not None
    assert (tool.thread is threading.current_thread()) is bounded  # a bounded read: no hand-off
    # Its connection went back to the pool rolled back, and free of the deadline: the next read works.
    model = use(app, ScriptedProvider(calls(call("search_materials", {"keyword": "面粉"})), answer("ok")))
    _, _, message = run(app, "staff", "面粉")
    assert "error" not in content(model.requests[1]) and message.status == "completed"


def test_a_read_whose_deadline_passed_before_its_first_query_is_stopped_as_it_begins(app):
    tool = EndlessQuery(bounded=True)
    slow_start = tool.execute
    tool.execute = lambda arguments, context: (time.sleep(0.4), slow_start(arguments, context))[1]
    started = time.monotonic()
    model, _ = called_once(app, tool, "it was slow")
    assert time.monotonic() - started < 3
    assert content(model.requests[1])["error"]["type"] == "Timeout"


def test_a_read_that_fails_late_for_another_reason_says_so_and_is_not_called_a_timeout(app):
    class LateNotFound(NoArguments):
        name = "late_not_found"
        description = "finds nothing, slowly"
        timeout_seconds = 0.1
        bounded = True

        def execute(self, arguments, context):
            context.session.execute(text("SELECT count(*) FROM materials")).scalar()
            time.sleep(0.2)
            raise ToolNotFound("no material M999")

    model, _ = called_once(app, LateNotFound(), "not found")
    assert content(model.requests[1])["error"] == {"type": "NotFound", "message": "no material M999"}


def test_a_deadline_left_on_a_connection_outside_the_pool_stops_nothing(app):
    with db.engine.connect() as connection:  # kept by its owner: never checked in meanwhile
        session = Session(bind=connection)
        with stopped_at(session, time.monotonic() + 0.05):
            session.execute(text("SELECT 1"))
        session.close()  # its transaction ends (and PostgreSQL's SET LOCAL with it); the connection stays out
        time.sleep(0.1)
        assert connection.execute(text(LONG_BUT_FINITE)).scalar() == 1_000_000


def test_a_write_past_its_timeout_is_not_stopped_and_reported_as_done(app):
    class SlowWrite(NoArguments):
        name = "slow_write"
        description = "writes slowly"
        read_only = False
        timeout_seconds = 0.1

        def execute(self, arguments, context):
            time.sleep(0.3)  # e.g. waiting for a row lock: it may still commit, so it is never cut off
            context.session.execute(text("UPDATE materials SET code = code WHERE code = 'M001'"))
            return {"done": True}

    model, _ = called_once(app, SlowWrite())
    assert content(model.requests[1]) == {"done": True}


def test_a_deadline_does_not_follow_its_connection_to_the_next_user(app):
    class QuickRead(NoArguments):
        name = "quick_read"
        description = "reads a little"
        timeout_seconds = 0.2
        bounded = True

        def execute(self, arguments, context):
            return {"n": context.session.execute(text("SELECT count(*) FROM materials")).scalar()}

    model, _ = called_once(app, QuickRead(), "ok")
    assert "error" not in content(model.requests[1])
    time.sleep(0.3)  # its deadline has passed; the connection it used is back in the pool

    db.session.close()
    with contextlib.ExitStack() as stack:  # every connection the pool holds, the tool's among them
        connections = [stack.enter_context(db.engine.connect()) for _ in range(4)]
        for connection in connections:
            started = time.monotonic()
            assert connection.execute(text(LONG_BUT_FINITE)).scalar() == 1_000_000
            assert time.monotonic() - started > 0.01  # long enough for a stale deadline to stop it


# --- parallel reads, serial writes -----------------------------------------------------------


class Recorder:
    def __init__(self):
        self.spans: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def tool(self, name: str, read_only: bool, seconds: float) -> ToolExecutor:
        recorder = self

        class Recorded(ToolExecutor):
            description = "records when it runs"
            labels = help = ("测试", "test")
            parameters = {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "additionalProperties": False,
            }

            def execute(self, arguments, context):
                start = time.monotonic()
                time.sleep(seconds)
                with recorder.lock:
                    recorder.spans.append((f"{name}{arguments.get('n', '')}", start, time.monotonic()))
                return {"n": arguments.get("n")}

        Recorded.name = name
        Recorded.read_only = read_only
        return Recorded()


def test_reads_of_one_round_run_in_parallel_and_results_keep_call_order(app):
    recorder = Recorder()
    manager().registry.register(recorder.tool("slow_read", True, 0.3))
    model = use(
        app,
        ScriptedProvider(
            calls(*(call("slow_read", {"n": n}, f"call_{n}") for n in range(3))),
            answer("done"),
        ),
    )
    started = time.monotonic()
    run(app, "staff", "go")
    elapsed = time.monotonic() - started
    assert elapsed < 0.75, f"three 0.3 s reads took {elapsed:.2f} s: not parallel"
    results = tool_messages(model.requests[1])
    assert [m.tool_call_id for m in results] == ["call_0", "call_1", "call_2"]
    assert [json.loads(m.content)["n"] for m in results] == [0, 1, 2]


def test_writes_run_one_by_one(app):
    recorder = Recorder()
    manager().registry.register(recorder.tool("slow_write", False, 0.1))
    use(
        app,
        ScriptedProvider(
            calls(*(call("slow_write", {"n": n}, f"call_{n}") for n in range(3))), answer("done")
        ),
    )
    run(app, "staff", "go")
    spans = sorted(recorder.spans, key=lambda s: s[1])
    assert [s[0] for s in spans] == ["slow_write0", "slow_write1", "slow_write2"]
    for (_, _, end), (_, start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, "writes overlapped"


# --- limits ----------------------------------------------------------------------------------


def test_iteration_cap_ends_with_a_summary_call_without_tools(app):
    loop_forever = [calls(call("list_low_stock", {}, f"call_{i}")) for i in range(5)]
    model = use(app, ScriptedProvider(*loop_forever, answer("以下是我目前查到的低库存原料。")))
    _, _, message = run(app, "staff", "keep going")
    assert len(model.requests) == 6
    assert all(r.tools for r in model.requests[:5]) and model.requests[5].tools == ()
    assert message.status == "completed" and message.content == "以下是我目前查到的低库存原料。"
    assert len(message.rounds) == 5


def test_apology_only_when_the_summary_call_fails(app):
    loop_forever = [calls(call("list_low_stock", {}, f"call_{i}")) for i in range(5)]
    use(app, ScriptedProvider(*loop_forever, ProviderError("down", code="InternalError")))
    _, _, zh = run(app, "staff", "一直查")
    assert zh.content == "抱歉，处理超时，请简化您的请求或重试。"
    use(
        app,
        ScriptedProvider(*[calls(call("list_low_stock", {}, f"c{i}")) for i in range(5)], ProviderError("x")),
    )
    _, _, en = run(app, "staff", "keep going")
    assert en.content.startswith("Sorry, this took too many steps")


def test_iteration_cap_comes_from_the_environment(app_with, tmp_path, monkeypatch):
    monkeypatch.setenv("INVENTORY_AI_MAX_TOOL_ITERATIONS", "2")
    from inventory_ai.config import Config

    config = Config.from_env(tmp_path)
    config.demo_password = "demo-password"
    app = app_with(config)
    with app.app_context():
        steps = [calls(call("list_low_stock", {}, f"c{i}")) for i in range(2)]
        model = use(app, ScriptedProvider(*steps, answer("sum")))
        run(app, "staff", "loop")
        assert len(model.requests) == 3 and model.requests[2].tools == ()


def test_tool_call_budget_per_message(app):
    many = calls(*(call("list_low_stock", {}, f"call_{i}") for i in range(25)))
    model = use(app, ScriptedProvider(many, answer("enough")))
    run(app, "staff", "all of it")
    results = [json.loads(m.content) for m in tool_messages(model.requests[1])]
    assert len(results) == 25
    assert all("error" not in r for r in results[:20])
    assert all(
        r["error"]["type"] == "ExecutionFailed" and "budget" in r["error"]["message"] for r in results[20:]
    )


def test_large_results_are_compacted_not_cut(app):
    manager().calls.result_budget_chars = 1500
    model = use(
        app, ScriptedProvider(calls(call("search_materials", {"keyword": "粉", "limit": 50})), answer("ok"))
    )
    run(app, "staff", "all powders")
    raw = tool_messages(model.requests[1])[0].content
    assert len(raw) <= 1500
    data = json.loads(raw)  # still valid JSON
    assert data["more_available"] is True and data["omitted_rows"]["materials"] > 0
    assert data["materials"][0]["code"]


# --- confirmation ----------------------------------------------------------------------------


def booking(quantity=20, call_id="call_book"):
    return call("record_stock_movement", scripted.booking(quantity), call_id)


def test_booking_waits_for_approval_then_books_and_resumes(app, session):
    model = use(app, ScriptedProvider(calls(booking()), answer("已出库 20 kg，剩余 80 kg。")))
    turn, events, message = run(app, "staff", "高筋面粉出库20公斤")
    assert message.status == "awaiting_confirmation"
    confirm = [e for e in events if isinstance(e, ConfirmationRequired)][0]
    assert confirm.pending[0].description == "出库 20 kg 高筋面粉 (M001)，主仓库"
    assert m001_level(session) == Decimal("100")  # nothing booked yet

    decision = decisions().prepare(session, _user("staff"), turn.message_id, True)
    events = list(decisions().decide(session, decision))
    turn = decision.answer
    assert m001_level(session) == Decimal("80")
    result = [e for e in events if isinstance(e, ToolResultEvent)][0]
    assert result.status == "success" and json.loads(result.content)["level_after"] == "80"
    message = session.get(ChatMessage, turn.message_id)
    assert message.status == "completed" and message.content == "已出库 20 kg，剩余 80 kg。"
    assert tool_messages(model.requests[1])[0].tool_call_id == "call_book"


def test_rejecting_tells_the_model_and_books_nothing(app, session):
    model = use(app, ScriptedProvider(calls(booking()), answer("好的，已取消。")))
    turn, _, _ = run(app, "staff", "出库20公斤高筋面粉")
    decision = decisions().prepare(session, _user("staff"), turn.message_id, False)
    list(decisions().decide(session, decision))
    turn = decision.answer
    assert m001_level(session) == Decimal("100")
    assert content(model.requests[1])["error"]["message"] == "declined by the user"
    assert session.get(ChatMessage, turn.message_id).status == "completed"


def test_pending_confirmation_survives_a_restart(app, session, database_url, app_with):
    use(app, ScriptedProvider(calls(booking())))
    turn, _, _ = run(app, "staff", "出库")
    db.session.remove()

    restarted = app_with(url=database_url)  # a new process would see the same rows
    with restarted.app_context():
        use(restarted, ScriptedProvider(answer("done after restart")))
        staff = _user("staff")
        decision = decisions().prepare(db.session, staff, turn.message_id, True)
        list(decisions().decide(db.session, decision))
        assert m001_level(db.session) == Decimal("80")
        assert db.session.get(ChatMessage, turn.message_id).content == "done after restart"


def test_only_the_owner_may_decide(app, session):
    use(app, ScriptedProvider(calls(booking())))
    turn, _, _ = run(app, "staff", "出库")
    with pytest.raises(NotFound):
        decisions().prepare(session, _user("manager"), turn.message_id, True)


def test_decision_twice_is_a_conflict_and_books_once(app, session):
    use(app, ScriptedProvider(calls(booking()), answer("ok")))
    turn, _, _ = run(app, "staff", "出库")
    decision = decisions().prepare(session, _user("staff"), turn.message_id, True)
    list(decisions().decide(session, decision))
    with pytest.raises(Conflict):
        decisions().prepare(session, _user("staff"), turn.message_id, True)
    assert m001_level(session) == Decimal("80")


def test_a_booking_larger_than_the_stock_is_refused_before_asking_and_says_what_is_on_hand(app, session):
    model = use(app, ScriptedProvider(calls(booking(quantity=500)), answer("库存不足")))
    _, _, message = run(app, "staff", "出库500公斤")
    assert message.status == "completed"  # no confirmation card for what cannot be booked
    error = content(model.requests[1])["error"]
    assert error["type"] == "ExecutionFailed"
    assert error["message"] == "库存不足：主仓库现有高筋面粉 (M001) 100 kg，要出库 500 kg"
    assert m001_level(session) == Decimal("100")


def test_unknown_material_in_a_booking_is_an_error_not_a_question(app):
    bad = call(
        "record_stock_movement",
        {
            "material": "火箭燃料",
            "warehouse": "主仓库",
            "movement_type": "outbound",
            "quantity": 1,
            "reason": "x",
        },
    )
    model = use(app, ScriptedProvider(calls(bad), answer("no such material")))
    _, _, message = run(app, "staff", "出库火箭燃料")
    assert message.status == "completed"
    assert content(model.requests[1])["error"]["type"] == "NotFound"


def test_staff_may_not_adjust_but_managers_may(app, session):
    adjust = call(
        "record_stock_movement",
        {
            "material": "M001",
            "warehouse": "主仓库",
            "movement_type": "adjustment",
            "quantity": 90,
            "reason": "盘点",
        },
    )
    model = use(app, ScriptedProvider(calls(adjust), answer("no")))
    run(app, "staff", "盘点")
    assert content(model.requests[1])["error"]["type"] == "PermissionDenied"
    use(app, ScriptedProvider(calls(adjust), answer("asked")))
    _, _, message = run(app, "manager", "盘点")
    assert message.status == "awaiting_confirmation"


# --- cancel ----------------------------------------------------------------------------------


def test_cancel_stops_at_the_next_safe_point(app, session):
    def cancel_then_call(request):
        waiting = session.scalar(select(ChatMessage).where(ChatMessage.status == "running"))
        decisions().cancel(session, _user("staff"), waiting.id)
        return calls(call("list_low_stock", {}))

    use(app, ScriptedProvider(cancel_then_call, answer("should not be asked")))
    _, events, message = run(app, "staff", "what is low?")
    assert message.status == "cancelled"
    assert events[-1].kind == "done" and events[-1].status == "cancelled"


def test_cancel_while_awaiting_confirmation_declines_the_booking(app, session):
    use(app, ScriptedProvider(calls(booking())))
    turn, _, _ = run(app, "staff", "出库")
    message = decisions().cancel(session, _user("staff"), turn.message_id)
    assert message.status == "cancelled"
    assert message.rounds[0].calls[0].status == "declined"
    assert m001_level(session) == Decimal("100")


def test_a_client_that_disconnects_cancels_the_message(app, session):
    use(app, ScriptedProvider(calls(call("list_low_stock", {})), answer("never seen")))
    turn = manager().prepare_message(session, _user("staff"), "low?", None)
    stream = manager().run(session, turn)
    next(stream)  # the first event arrives, then the page is closed
    stream.close()
    assert session.get(ChatMessage, turn.message_id).status == "cancelled"


# --- history, audit, usage, settings ---------------------------------------------------------


def test_a_follow_up_replays_the_stored_rounds(app):
    model = use(
        app,
        ScriptedProvider(
            calls(call("search_materials", {"keyword": "面粉"}, "call_a"), text="查一下"),
            answer("有 13 种。"),
            answer("高筋面粉有 100 kg。"),
        ),
    )
    turn, _, _ = run(app, "staff", "面粉有哪些？")
    run(app, "staff", "高筋的呢？", turn.conversation_id)
    wire = [m.to_wire() for m in model.requests[2].messages[1:]]
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "assistant", "user"]
    assert wire[1]["content"] == "查一下"
    assert wire[1]["tool_calls"] == [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "search_materials", "arguments": '{"keyword": "面粉"}'},
        }
    ]
    assert wire[2]["tool_call_id"] == "call_a" and json.loads(wire[2]["content"])["total"] >= 4
    assert wire[3] == {"role": "assistant", "content": "有 13 种。"}


def test_a_new_message_waits_while_one_awaits_confirmation(app):
    use(app, ScriptedProvider(calls(booking())))
    turn, _, _ = run(app, "staff", "出库")
    with pytest.raises(Conflict):
        manager().prepare_message(db.session, _user("staff"), "again", turn.conversation_id)


def test_another_users_conversation_is_not_found(app):
    use(app, ScriptedProvider(answer("hi")))
    turn, _, _ = run(app, "staff", "hi")
    with pytest.raises(NotFound):
        manager().prepare_message(db.session, _user("manager"), "peek", turn.conversation_id)


def test_every_execution_is_audited_without_secrets(app, session):
    use(
        app,
        ScriptedProvider(
            calls(call("search_materials", {"keyword": "sk-abcdefghijklmnopqrstu"}), call("nope", {})),
            answer("ok"),
        ),
    )
    run(app, "staff", "find")
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.action == "tool_call").order_by(AuditEvent.id)
    ).all()
    assert [(e.tool_name, e.status) for e in events] == [("search_materials", "success"), ("nope", "error")]
    assert events[0].arguments == {"keyword": "[redacted]"}
    assert events[1].error_type == "PermissionDenied" and events[0].role == "warehouse_staff"


def test_usage_is_stored_per_model_call(app, session):
    use(app, ScriptedProvider(calls(call("list_low_stock", {})), answer("ok")))
    _, _, message = run(app, "staff", "low")
    rows = session.scalars(select(ModelCall).where(ModelCall.message_id == message.id)).all()
    assert [(r.input_tokens, r.output_tokens, r.status) for r in rows] == [
        (10, 5, "success"),
        (20, 8, "success"),
    ]
    assert (message.input_tokens, message.output_tokens) == (30, 13)


def test_a_tool_disabled_by_an_admin_is_gone_on_the_next_message(app, session):
    model = use(app, ScriptedProvider(answer("a"), calls(call("list_low_stock", {})), answer("b")))
    run(app, "staff", "first")
    assert "list_low_stock" in {t.name for t in model.requests[0].tools}
    session.add(ToolSetting(tool_name="list_low_stock", enabled=False))
    session.commit()
    manager().registry.settings_changed()  # as the admin API does after its commit
    run(app, "staff", "second")
    assert "list_low_stock" not in {t.name for t in model.requests[1].tools}
    assert content(model.requests[2])["error"]["type"] == "PermissionDenied"


def test_a_setting_changed_by_another_worker_or_straight_in_the_database_applies_soon(
    app, session, monkeypatch
):
    """The settings are trusted for a few seconds: another worker on this host says it changed them
    through the marker file (read again at once); a change made elsewhere is read once they age."""
    model = use(app, ScriptedProvider(answer("a"), answer("b"), answer("c"), answer("d")))
    run(app, "staff", "first")
    session.add(ToolSetting(tool_name="list_low_stock", enabled=False))
    session.commit()
    run(app, "staff", "second")  # nothing said it changed, and what was read is a moment old
    assert "list_low_stock" in {t.name for t in model.requests[1].tools}
    ChangeMarker(app.instance_path, "tool-settings-changed").mark()  # another worker's admin request
    run(app, "staff", "third")
    assert "list_low_stock" not in {t.name for t in model.requests[2].tools}
    session.query(ToolSetting).delete()
    session.commit()
    monkeypatch.setattr(registry_module, "SETTINGS_CHECK_SECONDS", 0.0)  # another host: only time tells
    run(app, "staff", "fourth")
    assert "list_low_stock" in {t.name for t in model.requests[3].tools}


def test_admins_can_grant_a_tool_to_another_role(app, session):
    session.add(ToolSetting(tool_name="create_purchase_request", allowed_roles=["warehouse_staff", "admin"]))
    session.commit()
    model = use(app, ScriptedProvider(answer("x"), answer("y")))
    run(app, "staff", "hi")
    run(app, "manager", "hi")
    assert "create_purchase_request" in {t.name for t in model.requests[0].tools}
    assert "create_purchase_request" not in {t.name for t in model.requests[1].tools}


# --- property: whatever the model sends, the manager holds ---------------------------------


class Spy(ToolExecutor):
    name = "admin_spy"
    labels = help = ("测试", "test")
    description = "admin only; records executions"
    parameters = {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": False}
    allowed_roles = frozenset({"admin"})
    executions = 0

    def execute(self, arguments, context):
        Spy.executions += 1
        return {"ok": True}


names = st.sampled_from(
    [
        "search_materials",
        "list_low_stock",
        "get_material_detail",
        "admin_spy",
        "create_new_intent",
        "rm_rf",
        "",
        "SEARCH",
    ]
)
raw_arguments = st.one_of(
    st.dictionaries(
        st.sampled_from(["keyword", "material", "limit", "x", "warehouse", "zzz"]),
        st.one_of(st.integers(), st.text(max_size=12), st.none(), st.booleans()),
        max_size=4,
    ).map(json.dumps),
    st.text(max_size=30),
    st.just("null"),
    st.just("[1,2]"),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rounds=st.lists(st.lists(st.tuples(names, raw_arguments), min_size=1, max_size=4), min_size=1, max_size=6)
)
def test_random_tool_calls_never_escape_the_manager(app, rounds):
    if manager().registry.get("admin_spy") is None:
        manager().registry.register(Spy())
    Spy.executions = 0
    script = [
        calls(*(call(n, a, f"call_{r}_{i}") for i, (n, a) in enumerate(batch)))
        for r, batch in enumerate(rounds)
    ]
    use(app, ScriptedProvider(*script, *[answer("end")] * 2))
    _, events, message = run(app, "staff", "fuzz")
    assert Spy.executions == 0
    assert message.status in ("completed", "awaiting_confirmation")
    assert events[-1].kind in ("done", "confirmation_required")
    if message.status == "awaiting_confirmation":
        decisions().cancel(db.session, _user("staff"), message.id)


def test_model_reply_with_tool_calls_and_stop_reason_still_runs_the_tools(app):
    reply = ModelReply(text="", tool_calls=(call("list_low_stock", {}),), finish_reason="stop")
    model = use(app, ScriptedProvider(reply, answer("ok")))
    run(app, "staff", "low")
    assert len(model.requests) == 2 and tool_messages(model.requests[1])
