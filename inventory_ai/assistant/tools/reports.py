"""Turning earlier results into a table."""

from __future__ import annotations

from inventory_ai.assistant.tools.base import ToolContext, ToolExecutor
from inventory_ai.services.reports import MAX_ROWS, format_report


class FormatReport(ToolExecutor):
    name = "format_report"
    bounded = True
    labels = ("报表", "Report")
    help = ("把结果整理成报表，例如“生成低库存报表”", 'turn results into a report, e.g. "low stock report"')
    description = "Format rows from earlier results as a Markdown or CSV table."
    parameters = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 200},
            "rows": {"type": "array", "items": {"type": "object"}, "minItems": 1, "maxItems": MAX_ROWS},
            "format": {"enum": ["markdown", "csv"]},
        },
        "required": ["title", "rows"],
        "additionalProperties": False,
    }

    def execute(self, arguments: dict, context: ToolContext):
        fmt = arguments.get("format", "markdown")
        return {"format": fmt, "report": format_report(arguments["title"], arguments["rows"], fmt)}
