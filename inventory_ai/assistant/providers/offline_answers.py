"""The offline provider's answers: a short sentence plus the rows that matter, in the user's language.

Every figure here is read from a tool result; nothing is made up.
"""

from __future__ import annotations

MAX_LINES = 10

CAPABILITIES = {
    "search_materials": ("查找原料，例如“帮我查找面粉原料”", 'find materials, e.g. "find flour"'),
    "get_material_detail": ("查看原料详情，例如“M001 详情”", 'look at one material, e.g. "details of M001"'),
    "get_inventory_stats": ("库存统计与库存金额", "stock totals and stock value"),
    "list_low_stock": (
        "列出低于补货点的原料，例如“哪些原料库存不足”",
        'list what is running low, e.g. "what is running low?"',
    ),
    "get_stock_movements": (
        "查询出入库记录，例如“最近7天高筋面粉的出库记录”",
        'stock movement history, e.g. "flour movements last 7 days"',
    ),
    "record_stock_movement": (
        "登记出入库（需您确认），例如“高筋面粉出库20公斤”",
        'book stock in or out (you confirm first), e.g. "book out 20 kg M001"',
    ),
    "create_purchase_request": (
        "提交采购申请，例如“申请采购低筋面粉500公斤”",
        'raise a purchase request, e.g. "purchase 500 kg M002"',
    ),
    "format_report": (
        "把结果整理成报表，例如“生成低库存报表”",
        'turn results into a report, e.g. "low stock report"',
    ),
}


def help_text(language: str, offered: set[str]) -> str:
    items = [CAPABILITIES[name] for name in CAPABILITIES if name in offered]
    if language == "zh":
        lines = ["您好！我是仓库库存助手，可以帮您："] + [f"- {zh}" for zh, _ in items]
        if not items:
            lines = ["您好！目前没有可用的工具，请联系管理员。"]
        return "\n".join(lines)
    lines = ["Hello! I'm the warehouse inventory assistant. I can:"] + [f"- {en}" for _, en in items]
    if not items:
        lines = ["Hello! No tools are available to you at the moment; please contact an admin."]
    return "\n".join(lines)


def compose_answer(language: str, text: str, results: list[dict]) -> str:
    parts = [_answer_one(language, r) for r in results]
    # When a report was made, the report is the answer; the data it came from was shown already.
    report = [
        p for r, p in zip(results, parts, strict=True) if r["name"] == "format_report" and not r["error"]
    ]
    return report[-1] if report else "\n\n".join(p for p in parts if p)


def _answer_one(lang: str, result: dict) -> str:
    zh = lang == "zh"
    if result["error"]:
        message = result["error"].get("message", "")
        if result["error"].get("type") == "Declined":
            return "好的，已取消，没有登记任何库存变动。" if zh else "OK, cancelled: nothing was booked."
        return f"操作未完成：{message}" if zh else f"That did not work: {message}"
    writer = _WRITERS.get(result["name"])
    return writer(zh, result["arguments"], result["data"]) if writer else ""


def _more(zh: bool, shown: int, total) -> str:
    if isinstance(total, int) and total <= shown:
        return ""
    return (
        f"\n（还有更多，共 {total} 条，可缩小范围查询）"
        if zh
        else f"\n(more available: {total} in all; narrow the query)"
    )


def _search(zh, args, data):
    rows = data.get("materials", [])
    keyword = args.get("keyword", "")
    if not rows:
        return f"没有找到与“{keyword}”相关的原料。" if zh else f'No materials match "{keyword}".'
    head = (
        f"找到 {data['total']} 种与“{keyword}”相关的原料："
        if zh
        else f'Found {data["total"]} materials matching "{keyword}":'
    )
    lines = []
    for r in rows[:MAX_LINES]:
        shares = r.get("warehouses") or ({r["warehouse"]: r["stock"]} if r.get("warehouse") else {})
        where = ("，" if zh else ", ").join(f"{w} {q}" for w, q in shares.items())
        name = r["name"] if zh else f"{r['name_en']} {r['name']}"
        suffix = f"（{where}）" if zh and where else (f" ({where})" if where else "")
        lines.append(
            f"- {name} ({r['code']})：{r['stock']} {r['unit']}{suffix}"
            if zh
            else f"- {name} ({r['code']}): {r['stock']} {r['unit']}{suffix}"
        )
    return head + "\n" + "\n".join(lines) + _more(zh, len(rows), data.get("total"))


def _detail(zh, args, data):
    warehouses = ", ".join(f"{w} {q}" for w, q in data.get("warehouses", {}).items()) or "-"
    low = data.get("below_reorder_point")
    if zh:
        flag = "，已低于补货点" if low else ""
        return (
            f"{data['name']} ({data['code']}，{data['name_en']})：库存 {data['stock']} {data['unit']}{flag}。\n"
            f"- 分仓：{warehouses}\n- 规格：{data.get('spec') or '-'}；类别：{data['category']}；供应商：{data.get('supplier') or '-'}\n"
            f"- 单价：{data['unit_cost_cny']} 元/{data['unit']}；补货点：{data['reorder_point']} {data['unit']}"
        )
    flag = ", below its reorder point" if low else ""
    return (
        f"{data['name_en']} {data['name']} ({data['code']}): {data['stock']} {data['unit']} in stock{flag}.\n"
        f"- By warehouse: {warehouses}\n- Spec: {data.get('spec') or '-'}; category: {data['category']}; "
        f"supplier: {data.get('supplier') or '-'}\n"
        f"- Unit cost: CNY {data['unit_cost_cny']}/{data['unit']}; reorder point: {data['reorder_point']} {data['unit']}"
    )


def _stats(zh, args, data):
    lines = [
        f"- {r['warehouse']}：{r['materials']} 种，{r['value_cny']} 元"
        if zh
        else f"- {r['warehouse']}: {r['materials']} materials, CNY {r['value_cny']}"
        for r in data.get("by_warehouse", [])
    ]
    if zh:
        head = (
            f"库存共 {data['materials_in_stock']} 种原料，总值 {data['total_value_cny']} 元；"
            f"{data['below_reorder_point']} 种低于补货点。"
        )
    else:
        head = (
            f"{data['materials_in_stock']} materials in stock, worth CNY {data['total_value_cny']}; "
            f"{data['below_reorder_point']} are below their reorder point."
        )
    return head + ("\n" + "\n".join(lines) if lines else "")


def _low(zh, args, data):
    items = data.get("items", [])
    if not items:
        return "目前没有低于补货点的原料。" if zh else "Nothing is below its reorder point right now."
    head = (
        f"有 {data['total']} 种原料低于补货点："
        if zh
        else f"{data['total']} materials are below their reorder point:"
    )
    lines = [
        f"- {i['name']} ({i['code']})：现有 {i['quantity']} {i['unit']}，补货点 {i['reorder_point']}，缺口 {i['shortfall']} {i['unit']}"
        if zh
        else f"- {i['name_en']} {i['name']} ({i['code']}): {i['quantity']} {i['unit']} on hand, reorder point {i['reorder_point']}, short {i['shortfall']} {i['unit']}"
        for i in items[:MAX_LINES]
    ]
    return head + "\n" + "\n".join(lines) + _more(zh, len(items), data.get("total"))


def _movements(zh, args, data):
    rows = data.get("movements", [])
    if not rows:
        return "这段时间没有出入库记录。" if zh else "No stock movements in that period."
    head = (
        f"共 {data['total']} 条记录（入 {data['quantity_in']}，出 {data['quantity_out']}），最近的："
        if zh
        else f"{data['total']} movements (in {data['quantity_in']}, out {data['quantity_out']}); the latest:"
    )
    lines = [
        f"- {r['date']} {r['name']} ({r['code']}) {r['type']} {r['quantity']} {r['unit']}，{r['warehouse']}，结余 {r['level_after']}"
        if zh
        else f"- {r['date']} {r['name']} ({r['code']}) {r['type']} {r['quantity']} {r['unit']}, {r['warehouse']}, balance {r['level_after']}"
        for r in rows[:MAX_LINES]
    ]
    return head + "\n" + "\n".join(lines) + _more(zh, len(rows), data.get("total"))


def _booking(zh, args, data):
    verb_zh = {"inbound": "入库", "outbound": "出库", "adjustment": "盘点调整", "transfer": "调拨"}[
        data["movement_type"]
    ]
    verb_en = {
        "inbound": "Booked in",
        "outbound": "Booked out",
        "adjustment": "Adjusted",
        "transfer": "Transferred",
    }[data["movement_type"]]
    if zh:
        text = (
            f"已{verb_zh} {data['quantity']} {data['unit']} {data['material']}，{data['warehouse']}库存 "
            f"{data['level_before']} → {data['level_after']} {data['unit']}。"
        )
        if data.get("to_warehouse"):
            text += f" {data['to_warehouse']}现有 {data['to_level_after']} {data['unit']}。"
        return text
    text = (
        f"{verb_en} {data['quantity']} {data['unit']} {data['material']}; stock in {data['warehouse']} "
        f"{data['level_before']} → {data['level_after']} {data['unit']}."
    )
    if data.get("to_warehouse"):
        text += f" {data['to_warehouse']} now has {data['to_level_after']} {data['unit']}."
    return text


def _purchase(zh, args, data):
    if zh:
        due = f"，需求日期 {data['needed_by']}" if data.get("needed_by") else ""
        return f"已提交采购申请 #{data['purchase_request_id']}：{data['material']} {data['quantity']} {data['unit']}{due}，状态：待审批。"
    due = f", needed by {data['needed_by']}" if data.get("needed_by") else ""
    return f"Purchase request #{data['purchase_request_id']} raised: {data['material']} {data['quantity']} {data['unit']}{due}; status: pending."


def _report(zh, args, data):
    return data.get("report", "")


def _intent(zh, args, data):
    keywords = ", ".join(data.get("keywords", []))
    if zh:
        return f"已添加意图 {data['name']}：关键词 {keywords} → {data['tool_name']}。"
    return f"Intent {data['name']} added: {keywords} → {data['tool_name']}."


_WRITERS = {
    "search_materials": _search,
    "get_material_detail": _detail,
    "get_inventory_stats": _stats,
    "list_low_stock": _low,
    "get_stock_movements": _movements,
    "record_stock_movement": _booking,
    "create_purchase_request": _purchase,
    "format_report": _report,
    "create_new_intent": _intent,
}
