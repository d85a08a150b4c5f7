"""Interface text in Chinese and English: the user's setting, else the browser's Accept-Language."""

from __future__ import annotations

from flask import request
from flask_login import current_user

TEXT = {
    "title": ("仓库助手", "Inventory Assistant"),
    "username": ("用户名", "Username"),
    "password": ("密码", "Password"),
    "log_in": ("登录", "Log in"),
    "log_out": ("退出", "Log out"),
    "bad_login": ("用户名或密码错误", "Wrong username or password"),
    "too_many": ("尝试次数过多，请稍后再试", "Too many attempts; please wait and try again"),
    "new_chat": ("新对话", "New conversation"),
    "conversations": ("对话", "Conversations"),
    "placeholder": ("例如：帮我查找面粉原料", "e.g. what is running low?"),
    "message": ("消息", "Message"),
    "send": ("发送", "Send"),
    "cancel": ("停止", "Stop"),
    "tool_calls": ("工具调用", "Tool calls"),
    "thinking": ("思考过程", "Reasoning"),
    "approve": ("确认", "Approve"),
    "reject": ("拒绝", "Reject"),
    "confirm_title": ("请确认库存变动", "Please confirm this stock change"),
    "retry": ("重试", "Retry"),
    "error": ("出错了", "Something went wrong"),
    "cancelled": ("已停止", "Stopped"),
    "results": ("条结果", "results"),
    "failed": ("失败", "failed"),
    "declined": ("已拒绝", "declined"),
    "code": ("编码", "Code"),
    "name": ("名称", "Name"),
    "quantity": ("数量", "Quantity"),
    "unit": ("单位", "Unit"),
    "warehouse": ("仓库", "Warehouse"),
    "reorder_point": ("补货点", "Reorder point"),
    "date": ("日期", "Date"),
    "type": ("类型", "Type"),
}
TOOL_LABELS = {
    "search_materials": ("搜索原料", "Material search"),
    "get_material_detail": ("原料详情", "Material details"),
    "get_inventory_stats": ("库存统计", "Stock totals"),
    "list_low_stock": ("低库存", "Low stock"),
    "get_stock_movements": ("出入库记录", "Stock movements"),
    "record_stock_movement": ("库存变动", "Stock booking"),
    "create_purchase_request": ("采购申请", "Purchase request"),
    "format_report": ("报表", "Report"),
    "create_new_intent": ("新意图", "New intent"),
}


def language() -> str:
    if current_user.is_authenticated and current_user.language in ("zh", "en"):
        return current_user.language
    return request.accept_languages.best_match(["zh", "en"], default="zh") or "zh"


def strings(lang: str) -> dict[str, str]:
    index = 0 if lang == "zh" else 1
    out = {key: pair[index] for key, pair in TEXT.items()}
    out.update({f"tool.{key}": pair[index] for key, pair in TOOL_LABELS.items()})
    return out
