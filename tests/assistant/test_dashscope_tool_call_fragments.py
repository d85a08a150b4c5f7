"""DashScope's streamed tool calls assemble into the calls the model made, whatever their index says: by
index, else by id, else as new calls; malformed fragments never raise, and odd indexes over the real SDK
still make two pending bookings."""

from __future__ import annotations

import json

import pytest

from inventory_ai.assistant.extension import manager
from inventory_ai.assistant.providers.dashscope import _ToolCallAssembler
from inventory_ai.extensions import db
from inventory_ai.models import ChatMessage, User
from tests.support.dashscope_stub import DashScopeStub, Reply


def _fragment(
    call_id: str, quantity: int | None = None, index="omit", name="record_stock_movement", arguments=None
):
    function: dict = {"name": name}
    if arguments is not None:
        function["arguments"] = arguments
    elif quantity is not None:
        function["arguments"] = json.dumps({"material": "M001", "quantity": quantity})
    fragment = {"id": call_id, "type": "function", "function": function}
    if index != "omit":
        fragment["index"] = index
    return fragment


def _assembled(*events: list[dict]):
    assembler = _ToolCallAssembler()
    for fragments in events:
        assembler.add(fragments)
    return [(c.id, c.name, c.arguments) for c in assembler.calls()]


def test_two_complete_calls_without_an_index_stay_two_calls():
    calls_ = _assembled([_fragment("call_a", 5)], [_fragment("call_b", 7)])
    assert [c[0] for c in calls_] == ["call_a", "call_b"]
    assert [json.loads(c[2])["quantity"] for c in calls_] == [5, 7]


@pytest.mark.parametrize("index", [None, "0", 0.0, True], ids=["null", "string", "float", "bool"])
def test_an_index_that_is_not_an_integer_falls_back_to_the_id(index):
    calls_ = _assembled([_fragment("call_a", 5, index), _fragment("call_b", 7, 1)])
    assert [(c[0], json.loads(c[2])["quantity"]) for c in calls_] == [("call_a", 5), ("call_b", 7)]


def test_fragments_are_joined_by_index_as_dashscope_streams_them():
    calls_ = _assembled(
        [_fragment("call_a", index=0, arguments='{"material": "M0')],
        [{"index": 0, "id": "", "function": {"arguments": '01", "quantity": 5}'}}],
        [_fragment("call_b", index=1, arguments='{"quantity": 7}')],
    )
    assert calls_ == [
        ("call_a", "record_stock_movement", '{"material": "M001", "quantity": 5}'),
        ("call_b", "record_stock_movement", '{"quantity": 7}'),
    ]


def test_fragments_are_joined_by_id_and_bare_continuations_join_the_call_before():
    calls_ = _assembled(
        [_fragment("call_a", arguments='{"quantity"')],
        [{"id": "call_a", "function": {"arguments": ": 5}"}}],
        [{"function": {"arguments": " "}}],
    )
    assert calls_ == [("call_a", "record_stock_movement", '{"quantity": 5} ')]


def test_two_calls_given_the_same_index_are_two_calls():
    calls_ = _assembled([_fragment("call_a", 5, 0)], [_fragment("call_b", 7, 0)])
    assert [c[0] for c in calls_] == ["call_a", "call_b"]


def test_malformed_fragments_never_raise():
    assembler = _ToolCallAssembler()
    assembler.add([None, 3, "x", {"index": 0, "function": "not a dict"}, {"index": [1], "id": 5}])
    assembler.add("not a list")
    assert assembler.calls() == ()


class _NoIndexStub(DashScopeStub):
    """DashScope's protocol, with tool calls sent as a scenario of raw fragments."""

    scenario: list[list[dict]] | None = None

    def _events(self, behaviour, request_id, incremental):
        if _NoIndexStub.scenario is None:
            yield (
                "result",
                200,
                self._chunk({"role": "assistant", "content": "好"}, "stop", (1, 1), request_id),
            )
            return
        events, _NoIndexStub.scenario = _NoIndexStub.scenario, None
        for fragments in events:
            message = {"role": "assistant", "content": "", "tool_calls": fragments}
            yield ("result", 200, self._chunk(message, "null", (1, 1), request_id))
        yield (
            "result",
            200,
            self._chunk({"role": "assistant", "content": ""}, "tool_calls", (1, 1), request_id),
        )


def _booking(call_id: str, quantity: int, index="omit") -> dict:
    arguments = {
        "material": "M001",
        "warehouse": "主仓库",
        "movement_type": "outbound",
        "quantity": quantity,
        "unit": "kg",
        "reason": "领料",
    }
    return _fragment(call_id, index=index, arguments=json.dumps(arguments, ensure_ascii=False))


@pytest.mark.parametrize(
    "events",
    [
        [[_booking("call_a", 5)], [_booking("call_b", 7)]],
        [[_booking("call_a", 5, None), _booking("call_b", 7, 1)]],
        [[_booking("call_a", 5, "0")], [_booking("call_b", 7, 1)]],
    ],
    ids=["two events without index", "index null", "string index"],
)
def test_streamed_calls_with_odd_indexes_become_two_pending_bookings(app_with, events):
    from inventory_ai.config import config_for_tests

    with _NoIndexStub(default=Reply(content="x")) as stub:
        config = config_for_tests("")
        config.llm_provider, config.dashscope_api_key, config.dashscope_base_url = (
            "dashscope",
            "sk-test",
            stub.base_url,
        )
        config.llm_fallback, config.model_backoff_seconds = (), 0.01
        app = app_with(config)
        with app.app_context():
            _NoIndexStub.scenario = events
            staff = db.session.query(User).filter_by(username="staff").one()
            turn = manager().prepare_message(db.session, staff, "两笔出库", None)
            list(manager().run(db.session, turn))
            db.session.expire_all()
            message = db.session.get(ChatMessage, turn.message_id)
            recorded = [
                (c.status, json.loads(c.arguments)["quantity"]) for r in message.rounds for c in r.calls
            ]
            assert message.status == "awaiting_confirmation", (message.status, message.error_code)
            assert recorded == [("pending_confirmation", 5), ("pending_confirmation", 7)]
            db.session.remove()
