"""The scripted model (inventory_ai/assistant/testing.py) for this suite: `use` puts it into a test's
app through the manager's seam (`ToolExecutionManager.override`) for the rest of the test,
`booking` writes a booking's arguments and `books` is a model that asks for one."""

from __future__ import annotations

from contextlib import ExitStack

from inventory_ai.assistant.extension import EXTENSION_KEY
from inventory_ai.assistant.testing import ScriptedProvider, Step, answer, call, calls

__all__ = [
    "ScriptedProvider",
    "Step",
    "answer",
    "booking",
    "books",
    "call",
    "calls",
    "close_overrides",
    "use",
]

OVERRIDES = "tests.model_overrides"


def use(app, provider):
    """`provider` answers in `app` from now on (the app is the test's own): an override that
    `close_overrides` ends when the app goes."""
    overrides = app.extensions.setdefault(OVERRIDES, ExitStack())
    overrides.enter_context(app.extensions[EXTENSION_KEY].override(provider=provider))
    return provider


def close_overrides(app) -> None:
    overrides = app.extensions.pop(OVERRIDES, None)
    if overrides is not None:
        overrides.close()


def booking(quantity: float, movement_type: str = "outbound", material: str = "M001") -> dict:
    """The arguments of a record_stock_movement call in the main warehouse, in kg."""
    return {
        "material": material,
        "warehouse": "主仓库",
        "movement_type": movement_type,
        "quantity": quantity,
        "unit": "kg",
        "reason": "生产领料",
    }


def books(arguments: dict) -> ScriptedProvider:
    """A model that asks for one booking (call id `call_model`) whenever the user speaks, and
    otherwise answers with what the tool said."""

    def step(request):
        if request.messages[-1].role == "user":
            return calls(call("record_stock_movement", arguments, "call_model"))
        return answer("结果：" + request.messages[-1].content)

    return ScriptedProvider(*[step] * 6)
