"""What the model costs, as admins and Prometheus see it: tokens and an estimated cost per user per
day by model (GET /api/v1/admin/metrics), token and round counters at /metrics. Over HTTP with the
real SDK against the DashScope-protocol stub."""

from __future__ import annotations

import re
from datetime import timedelta

import schemathesis
from sqlalchemy import select, update

from inventory_ai.extensions import db
from inventory_ai.models import ModelCall
from inventory_ai.services import clock, usage
from tests.support.clients import client_for
from tests.support.dashscope_stub import Error, Reply, tool_call

PRICES = {"qwen-plus": (2.0, 6.0)}  # CNY per 1,000 input / output tokens; qwen-turbo left unpriced


def by_model(**behaviours):
    return lambda body: behaviours[body["model"]]


def test_admins_see_tokens_and_estimated_cost_per_user_per_day_by_model(qwen_app, stub):
    app = qwen_app(model_prices=PRICES, llm_fallback=("qwen-turbo",))
    stub.default = by_model(**{"qwen-plus": Reply(content="好的", usage=(1000, 500))})
    staff = client_for(app, "staff")
    for text in ("你好", "还在吗"):
        assert staff.post("/api/v1/chat", json={"message": text}).json["model"] == "qwen-plus"
    # The manager's answer comes from the fallback, which has no price: its cost is not guessed.
    stub.default = by_model(
        **{"qwen-plus": Error(500, "InternalError"), "qwen-turbo": Reply(content="备用", usage=(300, 100))}
    )
    assert (
        client_for(app, "manager").post("/api/v1/chat", json={"message": "你好"}).json["model"]
        == "qwen-turbo"
    )

    admin = client_for(app, "admin")
    response = admin.get("/api/v1/admin/metrics?days=7")
    rows = {r["user"]: r for r in response.json["tokens_per_user_per_day"]}
    today = clock.today().isoformat()
    assert rows["staff"] == {
        "user": "staff",
        "day": today,
        "input_tokens": 2000,
        "output_tokens": 1000,
        "cost_cny": 10.0,  # 2 x 2.0 + 1 x 6.0
        "models": [{"model": "qwen-plus", "input_tokens": 2000, "output_tokens": 1000, "cost_cny": 10.0}],
    }
    manager = rows["manager"]
    assert (manager["input_tokens"], manager["output_tokens"], manager["cost_cny"]) == (300, 100, None)
    assert {m["model"]: m["cost_cny"] for m in manager["models"]} == {"qwen-plus": 0.0, "qwen-turbo": None}
    # ...and the response is what the OpenAPI document says it is.
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    [operation] = [o.ok() for o in schema.get_all_operations() if o.ok().path == "/api/v1/admin/metrics"]
    operation.validate_response(response)
    document = admin.get("/api/openapi.json").json["components"]["schemas"]
    assert document["UserDayUsage"]["properties"]["cost_cny"]["nullable"] is True


def test_the_admins_day_is_the_day_the_token_budget_counts(qwen_app, stub):
    """Tokens used at 00:30 in the plant (the evening before in UTC) are today's, in the metrics
    as in the daily budget."""
    app = qwen_app(model_prices=PRICES)
    stub.default = Reply(content="好的", usage=(100, 50))
    staff = client_for(app, "staff")
    staff.post("/api/v1/chat", json={"message": "你好"})
    early = clock.day_start_utc(clock.today()) + timedelta(minutes=30)
    with app.app_context():
        db.session.execute(update(ModelCall).values(created_at=early))
        db.session.commit()
        staff_id = db.session.scalar(select(ModelCall.user_id))
        assert usage.tokens_today(db.session, staff_id) == 150
    [row] = client_for(app, "admin").get("/api/v1/admin/metrics?days=1").json["tokens_per_user_per_day"]
    assert (row["day"], row["input_tokens"] + row["output_tokens"]) == (clock.today().isoformat(), 150)


def scraped(client, name: str, **labels) -> float:
    text = client.get("/metrics").get_data(as_text=True)
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    found = re.search(rf"^{name}(?:\{{{re.escape(wanted)}\}})? (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def test_prometheus_counts_model_tokens_and_tool_rounds(qwen_app, stub):
    app = qwen_app()
    stub.then(
        Reply(tool_calls=[tool_call("search_materials", {"keyword": "面粉"})], usage=(120, 30)),
        Reply(content="找到了", usage=(400, 20)),
    )
    client = client_for(app, "staff")
    before = {
        "input": scraped(client, "inventory_ai_model_tokens_total", kind="input", model="qwen-plus"),
        "output": scraped(client, "inventory_ai_model_tokens_total", kind="output", model="qwen-plus"),
        "rounds": scraped(client, "inventory_ai_tool_rounds_total"),
    }
    assert client.post("/api/v1/chat", json={"message": "帮我查找面粉原料"}).json["status"] == "completed"
    after = {
        "input": scraped(client, "inventory_ai_model_tokens_total", kind="input", model="qwen-plus"),
        "output": scraped(client, "inventory_ai_model_tokens_total", kind="output", model="qwen-plus"),
        "rounds": scraped(client, "inventory_ai_tool_rounds_total"),
    }
    assert {k: after[k] - before[k] for k in after} == {"input": 520, "output": 50, "rounds": 1}
