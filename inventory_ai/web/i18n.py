"""The pages' words in Chinese and English: the user's stored choice, else the browser's
Accept-Language. Names of places and materials come from the catalogue, in the same language."""

from __future__ import annotations

from flask import g
from flask_login import current_user
from sqlalchemy import select

from inventory_ai.assistant.tools import builtin_tools
from inventory_ai.extensions import db
from inventory_ai.models import Category, Supplier, Warehouse
from inventory_ai.readers import LANGUAGES as LANGUAGES  # the page's language switch offers these
from inventory_ai.readers import reader_language
from inventory_ai.services.ledger import MOVEMENT_WORDS

TEXT = {
    "title": ("仓库助手", "Inventory Assistant"),
    "username": ("用户名", "Username"),
    "password": ("密码", "Password"),
    "log_in": ("登录", "Log in"),
    "log_out": ("退出", "Log out"),
    "bad_login": ("用户名或密码错误", "Wrong username or password"),
    "too_many": ("尝试次数过多，请稍后再试", "Too many attempts; please wait and try again"),
    "pages": ("页面", "Pages"),
    "new_chat": ("新对话", "New conversation"),
    "conversations": ("对话", "Conversations"),
    "today": ("今天", "Today"),
    "yesterday": ("昨天", "Yesterday"),
    "language": ("语言 Language", "语言 Language"),  # both, so either reader finds the switch
    "placeholder": ("例如：帮我查找面粉原料", "e.g. what is running low?"),
    "message": ("消息", "Message"),
    "send": ("发送", "Send"),
    "cancel": ("停止", "Stop"),
    "quick_actions": ("常用操作", "Common asks"),
    "tool_calls": ("工具调用", "Tool calls"),
    "thinking": ("思考过程", "Reasoning"),
    "approve": ("确认", "Approve"),
    "reject": ("拒绝", "Reject"),
    "confirm_title": ("请确认库存变动", "Please confirm this stock change"),
    "quantity_in": ("数量 ({unit})", "Quantity ({unit})"),
    "reason_optional": ("原因（可选）", "Reason (optional)"),
    "retry": ("重试", "Retry"),
    "error": ("出错了", "Something went wrong"),
    "stopped": ("已停止", "Stopped"),
    "still_running": ("仍在回答…", "Still answering…"),
    "results": ("条结果", "results"),
    "failed": ("失败", "failed"),
    "declined": ("已拒绝", "declined"),
    "waiting_signoff": ("等待签核", "waiting for sign-off"),
    "signoff_note": ("等待主管或管理员签核", "Waiting for a manager's or an admin's sign-off"),
    # the outcome of a sign-off, on the requester's answer
    "signoff_approved": ("{by} 已于 {at} 签核批准", "Signed off by {by} on {at}"),
    "signoff_rejected": ("{by} 已于 {at} 驳回签核", "Rejected by {by} on {at}"),
    "signoff_expired": ("签核已于 {at} 过期，没有登记", "The sign-off expired on {at}: nothing was booked"),
    "signoff_withdrawn": ("已于 {at} 撤回，没有登记", "Withdrawn on {at}: nothing was booked"),
    "signoff_reason": ("，理由：{reason}", ". Reason: {reason}"),
    # the sidebar's mark on a conversation with a sign-off waiting, or an outcome not yet opened
    "mark_waiting": ("待主管签核", "Waiting for sign-off"),
    "mark_approved": ("签核已批准", "Signed off"),
    "mark_rejected": ("签核被驳回", "Sign-off rejected"),
    "mark_expired": ("签核已过期", "Sign-off expired"),
    "changed": ("按修改确认：{changes}", "Approved with changes: {changes}"),
    "rejected_because": ("拒绝原因：{reason}", "Reason for rejecting: {reason}"),
    "approved_because": ("确认备注：{reason}", "Note with the approval: {reason}"),
    "model_note": (
        "此回答由 {used} 提供（{configured} 暂不可用）",
        "Answered by {used} ({configured} was unavailable)",
    ),
    "show_all": ("显示全部 {total} 条", "Show all {total}"),
    "showing_some": (
        "显示前 {shown} 条，共 {total} 条：请缩小范围查看其余",
        "Showing {shown} of {total}: narrow the question to see the rest",
    ),
    "back": ("返回对话", "Back to the conversation"),
    "bad_decision": ("请选择确认或拒绝", "Choose approve or reject"),
    "bad_language": ("语言只能是中文 (zh) 或 English (en)", "The language is zh or en"),
    # the chat page: where the eye is, the message box, plain errors, conversations
    "skip_to_message": ("跳到输入框", "Skip to the message box"),
    "skip_to_content": ("跳到正文", "Skip to the content"),
    "skip_to_card": ("跳到待确认的库存变动", "Skip to the booking to confirm"),
    "menu": ("菜单", "Menu"),
    "waiting": ("正在思考…", "Thinking…"),
    "jump_latest": ("回到最新消息", "Jump to latest"),
    "composer_hint": ("Enter 发送，Shift+Enter 换行", "Enter sends, Shift+Enter starts a new line"),
    "count": ("{count} / {limit} 字", "{count} / {limit} characters"),
    "logged_out": ("您已退出登录。", "You were logged out."),
    "log_in_again": ("重新登录并回到此对话", "Log in again and come back to this conversation"),
    "unreachable": ("无法连接服务器，正在重试…", "Can't reach the server, retrying…"),
    "copy_table": ("复制表格", "Copy table"),
    "copied": ("已复制", "Copied"),
    "download_csv": ("下载 CSV", "Download CSV"),
    "table": ("表格", "table"),
    "scroll_hint": ("表格较宽：左右滑动查看更多列", "Wide table: scroll sideways for more columns"),
    "search_conversations": ("搜索对话", "Search conversations"),
    "no_conversations": ("还没有对话。", "No conversations yet."),
    "none_found": ("没有找到包含“{q}”的对话。", "No conversation holds “{q}”."),
    "conversation_actions": ("管理对话", "Manage conversation"),
    "conversation_name": ("对话名称", "Conversation name"),
    "rename": ("重命名", "Rename"),
    "renamed": ("已重命名", "Renamed"),
    "delete_conversation": ("删除对话", "Delete conversation"),
    "deleted": ("已删除对话“{title}”", "Deleted “{title}”"),
    "edit_question": ("编辑并重新发送", "Edit and resend"),
    "field.message": ("消息", "Message"),
    "field.title": ("对话名称", "Conversation name"),
    "field.conversation_id": ("对话", "Conversation"),
    # table columns
    "code": ("编码", "Code"),
    "name": ("名称", "Name"),
    "name_en": ("英文名", "English name"),
    "quantity": ("数量", "Quantity"),
    "stock": ("库存", "Stock"),
    "unit": ("单位", "Unit"),
    "warehouse": ("仓库", "Warehouse"),
    "category": ("类别", "Category"),
    "reorder_point": ("补货点", "Reorder point"),
    "shortfall": ("缺口", "Shortfall"),
    "date": ("日期", "Date"),
    "time": ("时间", "Time"),
    "type": ("类型", "Type"),
    "materials": ("原料数", "Materials"),
    "value_cny": ("金额 (元)", "Value (CNY)"),
    "level_after": ("变动后库存", "Level after"),
    "reason": ("原因", "Reason"),
    # charts
    "stock_over_time": (
        "{name} ({code}) 库存，{first} 至 {last}（{days} 天，{unit}）",
        "{name} ({code}): stock from {first} to {last} ({days} days, {unit})",
    ),
    "stock_from_to": ("库存从 {first} 到 {last} {unit}", "Stock went from {first} to {last} {unit}"),
    # the overview
    "overview": ("库存概览", "Stock overview"),
    "total_value": ("库存总值", "Stock value"),
    "materials_in_stock": ("有库存的原料", "Materials in stock"),
    "below_reorder": ("低于补货点", "Below reorder point"),
    "value_by_warehouse": ("各仓库库存金额", "Stock value by warehouse"),
    # A person who works in some warehouses only (users.warehouses) is told so where figures show.
    "sites_only": ("仅限{names}", "{names} only"),
    "value_by_category": ("各类别库存金额", "Stock value by category"),
    "todays_movements": ("今天的出入库", "Today's stock movements"),
    "none_low": ("没有低于补货点的原料。", "Nothing is below its reorder point."),
    "none_today": ("今天还没有出入库。", "No stock movements today."),
    "yuan": ("{value} 元", "CNY {value}"),
    # sign-off
    "approvals": ("待签核", "Sign-offs"),
    "approvals_intro": (
        "这些库存变动金额较大，申请人已确认，需要另一位主管或管理员签核。",
        "These bookings are worth more than one person may book alone: their requester approved them, "
        "a second person signs them off.",
    ),
    "own_booking": (
        "这是您自己申请的，需由另一位主管或管理员签核。",
        "You asked for this one: another manager or admin signs it off.",
    ),
    "none_waiting": ("没有等待签核的库存变动。", "Nothing waits for a sign-off."),
    "requested_by": ("申请人", "Requested by"),
    "requested_at": ("申请时间", "Requested"),
    "expires": ("截止", "Expires"),
    "signoff_approve": ("批准", "Approve"),
    "signoff_reject": ("驳回", "Reject"),
    "signed_approved": ("已批准：{what}", "Approved: {what}"),
    "signed_rejected": ("已驳回：{what}", "Rejected: {what}"),
    "signers_only": (
        "只有仓库主管和管理员可以签核。",
        "Only warehouse managers and admins sign off bookings.",
    ),
    # what a waiting booking would do (templates/_effect.html)
    "effect": ("库存变化", "Effect on stock"),
    "effect_now": ("现有", "Now"),
    "effect_after": ("变动后", "After"),
    "effect_value": ("金额 {value} 元", "Value CNY {value}"),
    "flag.below_reorder_point_after": (
        "变动后低于补货点（{reorder} {unit}）",
        "Below the reorder point ({reorder} {unit}) after this",
    ),
    "flag.refused_negative": ("库存不足：此变动会被拒绝", "Not enough stock: this booking would be refused"),
}
# The quick actions under the input: (label, what it does, the words). "send" asks at once;
# "fill" starts the question for the user to finish. Offered by the tool they need.
QUICK_ACTIONS = (
    ("search_materials", "fill", ("查找原料", "Find materials"), ("帮我查找", "find ")),
    ("list_low_stock", "send", ("库存不足", "Running low"), ("哪些原料库存不足？", "what is running low?")),
    (
        "get_stock_movements",
        "send",
        ("今天的出入库", "Today's movements"),
        ("今天的库存变动", "today's stock movements"),
    ),
    ("record_stock_movement:inbound", "fill", ("入库", "Book in"), ("入库 ", "book in ")),
    ("record_stock_movement:outbound", "fill", ("出库", "Book out"), ("出库 ", "book out ")),
)
# A tool's name on the page is defined with the tool (assistant/tools/).
TOOL_LABELS = {tool.name: tool.labels for tool in builtin_tools()}


def language() -> str:
    return reader_language(current_user if current_user.is_authenticated else None)


def strings(lang: str) -> dict[str, str]:
    index = 0 if lang == "zh" else 1
    out = {key: pair[index] for key, pair in TEXT.items()}
    out.update({f"tool.{key}": pair[index] for key, pair in TOOL_LABELS.items()})
    out.update(
        {f"movement.{key}": words.zh if lang == "zh" else words.en for key, words in MOVEMENT_WORDS.items()}
    )
    return out


def place_names(lang: str) -> dict[str, str]:
    """Warehouse, category and supplier names as tool results give them (Chinese) -> the reader's.
    Tool results name places in Chinese; an English page shows the catalogue's English names."""
    if lang == "zh":
        return {}
    if "place_names" not in g:
        names: dict[str, str] = {}
        for model in (Warehouse, Category, Supplier):
            names.update(dict(db.session.execute(select(model.name_zh, model.name_en)).all()))
        g.place_names = names
    return g.place_names
