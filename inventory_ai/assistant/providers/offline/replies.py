"""The assistant's own words when no tool fits: a question, a refusal, a polite answer, the reason a
role cannot do something and who can. In the user's language."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inventory_ai.assistant.providers.offline.linking import Mention
    from inventory_ai.assistant.providers.offline.reading import Context, Reading

ROLE_NAMES = {
    "warehouse_staff": ("仓库员工", "warehouse staff"),
    "warehouse_manager": ("仓库主管", "warehouse managers"),
    "purchaser": ("采购员", "purchasers"),
    "admin": ("管理员", "admins"),
}


def ask(zh: bool, question_zh: str, question_en: str) -> str:
    return question_zh if zh else question_en


def which_material(r: Reading, mention: Mention) -> str:
    options = "、".join(f"{c.name_zh} ({c.code})" for c in mention.candidates[:4])
    options_en = ", ".join(f"{c.name_en} ({c.code})" for c in mention.candidates[:4])
    total = f"{mention.total}{'+' if mention.more else ''}"  # counted only so far in a large catalogue
    if r.zh:
        return f"“{mention.text}”对应 {total} 种原料，例如 {options}。您指的是哪一种？"
    return f'"{mention.text}" matches {total} materials, e.g. {options_en}. Which one do you mean?'


def which_one(r: Reading, ctx: Context) -> str:
    labels = [lbl for lbl, _p in r.guess.ranked if lbl in ctx.intents and ctx.intents[lbl][0] in ctx.offered][
        :3
    ]
    names = [ctx.tool_labels.get(ctx.intents[lbl][0], (lbl, lbl))[0 if r.zh else 1] for lbl in labels]
    names = list(dict.fromkeys(names)) or (
        ["搜索原料", "低库存"] if r.zh else ["material search", "low stock"]
    )
    if r.zh:
        return f"我没太明白，您是想{'，还是'.join(names)}？可以说得具体些，例如“高筋面粉还有多少”或“哪些原料快用完了”。"
    return f'I\'m not sure what you need: {", or ".join(names)}? For example "how much bread flour do we have?" or "what is running low?"'


def role_refusal(zh: bool, tool: str, ctx: Context) -> str:
    mine = ROLE_NAMES.get(ctx.role or "", (ctx.role or "", ctx.role or ""))
    who = [ROLE_NAMES.get(r, (r, r)) for r in ctx.who_can.get(tool, [])]
    label = ctx.tool_labels.get(tool, (tool, tool))
    if zh:
        others = "、".join(w[0] for w in who) or "管理员"
        return f"抱歉，您的角色（{mine[0]}）不能使用“{label[0]}”；{others}可以。需要的话请联系他们。"
    others = ", ".join(w[1] for w in who) or "admins"
    return (
        f"Sorry, your role ({mine[1]}) cannot use {label[1].lower()}; {others} can. Please ask one of them."
    )


def movement_refusal(zh: bool, kind: str, ctx: Context) -> str:
    mine = ROLE_NAMES.get(ctx.role or "", (ctx.role, ctx.role))
    can = [
        ROLE_NAMES.get(role, (role, role)) for role, kinds in ctx.movements_by_role.items() if kind in kinds
    ]
    words = {"adjustment": ("盘点调整", "stocktake adjustments"), "transfer": ("调拨", "transfers"),
             "inbound": ("入库", "booking in"), "outbound": ("出库", "booking out")}[kind]  # fmt: skip
    if zh:
        return f"抱歉，您的角色（{mine[0]}）不能登记{words[0]}；{'、'.join(c[0] for c in can)}可以。"
    return f"Sorry, your role ({mine[1]}) cannot make {words[1]}; {', '.join(c[1] for c in can)} can."


def no_such_warehouse(zh: bool, said: str, warehouses: list[tuple[str, str, str]]) -> str:
    """`warehouses`: (code, Chinese name, English name) of each warehouse there is."""
    if zh:
        names = "、".join(f"{name_zh} ({code})" for code, name_zh, _en in warehouses)
        return f"没有“{said}”这个仓库；我们的仓库是 {names}。您指的是哪一个？"
    names = ", ".join(f"{name_en} ({code})" for code, _zh, name_en in warehouses)
    return f'There is no warehouse "{said}"; ours are {names}. Which one do you mean?'


def small_talk(zh: bool, ctx: Context) -> str:
    if zh:
        return "您好！我是仓库库存助手，只能帮您处理库存相关的事，例如查找原料（“帮我查找面粉原料”）、看看哪些快用完了、登记出入库。请问需要做什么？"
    return (
        'Hello! I am the warehouse inventory assistant and can only help with stock: finding materials ("find flour"), '
        "what is running low, booking stock in or out. What do you need?"
    )


def refusal(zh: bool) -> str:
    if zh:
        return "抱歉，这个请求我不能执行：我不会删除数据、清空库存或绕过规则。库存变动只能逐笔登记，并由您确认后才生效。"
    return "Sorry, I can't do that: I never delete data, wipe stock or set rules aside. Stock changes are booked one by one, and only after you confirm them."


def out_of_scope(zh: bool) -> str:
    if zh:
        return (
            "抱歉，这个我帮不上：我只管仓库库存的事。您可以问我例如“高筋面粉还有多少”、“冷库都有什么”、"
            "“哪些原料快用完了”，或让我登记出入库、提采购申请。"
        )
    return (
        'Sorry, I can only help with the warehouse. You could ask, for example, "how much bread flour do '
        'we have?", "what\'s in the cold store?", "what is running low?", or have me book stock in or out '
        "or raise a purchase request."
    )
