"""The offline provider's answers: a short sentence plus the rows that matter, in the user's language.

Every figure here is read from a tool result; nothing is made up.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory_ai.assistant.providers.offline import words
from inventory_ai.services.ledger import MOVEMENT_WORDS
from inventory_ai.services.shown import figure as f  # 1,200 kg; 6,200.00: as a person reads figures
from inventory_ai.text import CJK_RUN


def compose_answer(language: str, text: str, results: list[dict], names: Callable[[str], str] = str) -> str:
    """The answer from this turn's results. `names` turns a Chinese warehouse, category or supplier
    name into the reader's language (English answers use English names throughout)."""
    zh = language == "zh"
    say = str if zh else names
    parts = [_answer_one(zh, r, say) for r in results]
    # When a report was made, the report is the answer; the data it came from was shown already.
    report = [
        p for r, p in zip(results, parts, strict=True) if r["name"] == "format_report" and not r["error"]
    ]
    return report[-1] if report else "\n\n".join(p for p in parts if p)


_ERRORS_ZH = words.ERRORS_ZH  # what went wrong, in Chinese, by the error's type (offline_words.json)


def _answer_one(zh: bool, result: dict, say: Callable[[str], str]) -> str:
    if result["error"]:
        message = result["error"].get("message", "")
        kind = result["error"].get("type")
        if kind == "Declined":
            return "好的，已取消，没有登记任何库存变动。" if zh else "OK, cancelled: nothing was booked."
        if kind == "PermissionDenied" and result["error"].get("message_zh"):  # a warehouse not theirs
            return result["error"]["message_zh"] if zh else message[:1].upper() + message[1:] + "."
        if not zh:
            return f"That did not work: {message}"
        if CJK_RUN.search(message):  # worded for the reader already (a stock check at describe time)
            return f"操作未完成：{message}"
        return "操作未完成：" + _ERRORS_ZH.get(kind, "请稍后重试，或换个说法。")
    writer = _WRITERS.get(result["name"])
    return writer(zh, result["arguments"], result["data"], say) if writer else ""


def _search(zh, args, data, say):
    """One line: how many, and the best match. The rows are the result (the page's table)."""
    rows = data.get("materials", [])
    keyword = args.get("keyword", "")
    if not keyword:  # what a warehouse or category holds
        where = " / ".join(x if zh else say(x) for x in (args.get("warehouse"), args.get("category")) if x)
        names, total = (
            ("、" if zh else ", ").join(r["name" if zh else "name_en"] for r in rows[:5]),
            data.get("total", len(rows)),
        )
        if zh:
            return f"{where} 共 {total} 种原料，例如 {names}。" if rows else f"{where} 没有原料。"
        return f"{where} holds {total} materials, e.g. {names}." if rows else f"{where} holds no materials."
    if not rows:
        return f"没有找到与“{keyword}”相关的原料。" if zh else f'No materials match "{keyword}".'
    best, total = rows[0], data["total"]
    if zh:
        if total == 1:
            return f"找到 1 种与“{keyword}”相关的原料：{best['name']} ({best['code']})，库存 {best['stock']} {best['unit']}。"
        return f"找到 {total} 种与“{keyword}”相关的原料，最匹配的是{best['name']} ({best['code']})，库存 {best['stock']} {best['unit']}。"
    if total == 1:
        return f'Found 1 material matching "{keyword}": {best["name_en"]} ({best["code"]}), {best["stock"]} {best["unit"]} in stock.'
    return (
        f'Found {total} materials matching "{keyword}"; the best match is {best["name_en"]} ({best["code"]}), '
        f"{best['stock']} {best['unit']} in stock."
    )


def _detail(zh, args, data, say):
    warehouses = ", ".join(f"{say(w)} {f(q)}" for w, q in data.get("warehouses", {}).items()) or "-"
    low = data.get("below_reorder_point")
    if zh:
        flag = "，已低于补货点" if low else ""
        return (
            f"{data['name']} ({data['code']}，{data['name_en']})：库存 {f(data['stock'])} {data['unit']}{flag}。\n"
            f"- 分仓：{warehouses}\n- 规格：{data.get('spec') or '-'}；类别：{data['category']}；供应商：{data.get('supplier') or '-'}\n"
            f"- 单价：{f(data['unit_cost_cny'])} 元/{data['unit']}；补货点：{f(data['reorder_point'])} {data['unit']}"
            + _described(data, zh)
        )
    flag = ", below its reorder point" if low else ""
    supplier = say(data["supplier"]) if data.get("supplier") else "-"
    return (
        f"{data['name_en']} ({data['code']}): {f(data['stock'])} {data['unit']} in stock{flag}.\n"
        f"- By warehouse: {warehouses}\n- Spec: {data.get('spec_en') or data.get('spec') or '-'}; category: {say(data['category'])}; "
        f"supplier: {supplier}\n"
        f"- Unit cost: CNY {f(data['unit_cost_cny'])}/{data['unit']}; reorder point: {f(data['reorder_point'])} {data['unit']}"
        + _described(data, zh)
    )


def _described(data, zh) -> str:
    """What the material is and its other names, as the catalogue keeps them."""
    text, also = data.get("description"), ", ".join((data.get("synonyms") or [])[:6])
    if zh:  # the description holds the Chinese line before " / " and the English after
        return (f"\n- 说明：{text.split(' / ')[0]}" if text else "") + (f"\n- 又称：{also}" if also else "")
    return (f"\n- What it is: {text.split(' / ')[-1]}" if text else "") + (
        f"\n- Also called: {also}" if also else ""
    )


def _stats(zh, args, data, say):
    lines = [
        f"- {r['warehouse']}：{r['materials']} 种，{f(r['value_cny'])} 元"
        if zh
        else f"- {say(r['warehouse'])}: {r['materials']} materials, CNY {f(r['value_cny'])}"
        for r in data.get("by_warehouse", [])
    ]
    if zh:
        head = (
            f"库存共 {data['materials_in_stock']} 种原料，总值 {f(data['total_value_cny'])} 元；"
            f"{data['below_reorder_point']} 种低于补货点。"
        )
    else:
        head = (
            f"{data['materials_in_stock']} materials in stock, worth CNY {f(data['total_value_cny'])}; "
            f"{data['below_reorder_point']} are below their reorder point."
        )
    return head + ("\n" + "\n".join(lines) if lines else "")


def _low(zh, args, data, say):
    """One line: how many, and the most urgent. The rows are the result (the page's table)."""
    items = data.get("items", [])
    if not items:
        return "目前没有低于补货点的原料。" if zh else "Nothing is below its reorder point right now."
    first, total = items[0], data["total"]
    if zh:
        return (
            f"有 {total} 种原料低于补货点，最紧的是{first['name']} ({first['code']})，"
            f"现有 {f(first['quantity'])} {first['unit']}。"
        )
    return (
        f"{total} materials are below their reorder point; the most urgent is {first['name_en']} "
        f"({first['code']}), {f(first['quantity'])} {first['unit']} left."
    )


def _movements(zh, args, data, say):
    rows = data.get("movements", [])
    if not rows:
        return "这段时间没有出入库记录。" if zh else "No stock movements in that period."
    latest = rows[0]
    if zh:
        words = MOVEMENT_WORDS[latest["type"]].zh
        return (
            f"共 {data['total']} 条记录（入 {f(data['quantity_in'])}，出 {f(data['quantity_out'])}）；最近一条：{latest['date']} "
            f"{latest['name']} ({latest['code']}) {words} {f(latest['quantity'].lstrip('-'))} {latest['unit']}，{latest['warehouse']}。"
        )
    words = MOVEMENT_WORDS[latest["type"]].en
    return (
        f"{data['total']} movements (in {f(data['quantity_in'])}, out {f(data['quantity_out'])}); the latest: {latest['date']} "
        f"{latest.get('name_en') or latest['name']} ({latest['code']}) {words} {f(latest['quantity'].lstrip('-'))} {latest['unit']}, "
        f"{latest.get('warehouse_en') or say(latest['warehouse'])}."
    )


def _booking(zh, args, data, say):
    words = MOVEMENT_WORDS[data["movement_type"]]
    if zh:
        text = (
            f"已{words.zh} {f(data['quantity'])} {data['unit']} {data['material']}，{data['warehouse']}库存 "
            f"{f(data['level_before'])} → {f(data['level_after'])} {data['unit']}。"
        )
        if data.get("to_warehouse"):
            text += f" {data['to_warehouse']}现有 {f(data['to_level_after'])} {data['unit']}。"
        return text
    material = data.get("material_en") or data["material"]
    text = (
        f"{words.en_done} {f(data['quantity'])} {data['unit']} {material}; stock in {say(data['warehouse'])} "
        f"{f(data['level_before'])} → {f(data['level_after'])} {data['unit']}."
    )
    if data.get("to_warehouse"):
        text += f" {say(data['to_warehouse'])} now has {f(data['to_level_after'])} {data['unit']}."
    return text


def _purchase(zh, args, data, say):
    if zh:
        due = f"，需求日期 {data['needed_by']}" if data.get("needed_by") else ""
        return f"已提交采购申请 #{data['purchase_request_id']}：{data['material']} {f(data['quantity'])} {data['unit']}{due}，状态：待审批。"
    due = f", needed by {data['needed_by']}" if data.get("needed_by") else ""
    return f"Purchase request #{data['purchase_request_id']} raised: {data['material']} {f(data['quantity'])} {data['unit']}{due}; status: pending."


def _report(zh, args, data, say):
    """The table itself is in the result (the page draws it); the answer says what it is."""
    rows = max(0, len([line for line in data.get("report", "").splitlines() if line.startswith("|")]) - 2)
    if data.get("format") == "csv":
        rows = max(0, len(data.get("report", "").splitlines()) - 1)
    title = args.get("title", "")
    return f"已生成报表“{title}”，共 {rows} 行。" if zh else f'Report "{title}" is ready: {rows} rows.'


def _intent(zh, args, data, say):
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
