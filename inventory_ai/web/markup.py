"""The assistant's text as people read it: the little Markdown models write (tables, lists, headings,
bold, code) becomes HTML; everything else is text. Every piece of the input is escaped first, so
nothing a model or a tool wrote can become markup of its own.

A small reader of our own rather than a Markdown library: models use a handful of constructs, and a
full Markdown (raw HTML, links, images) would be more to make safe than to write these.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
_BULLET = re.compile(r"^\s*[-*•]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+(?:[.)]\s+|、\s*)(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_INLINE = re.compile(r"\*\*([^*\n]{1,200}?)\*\*|`([^`\n]{1,200})`")  # bounded: no quadratic scans


def inline(text: str) -> Markup:
    """**bold** and `code` inside a line; the rest escaped."""
    out, last = [], 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[last : match.start()]))
        bold, code = match.groups()
        out.append(
            Markup("<strong>{}</strong>").format(bold) if bold else Markup("<code>{}</code>").format(code)
        )
        last = match.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


def table_cells(line: str) -> list[str]:
    """The cells of one `| a | b |` row; `\\|` is a pipe inside a cell."""
    line = line.strip()
    line = line.removeprefix("|")
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)]


def markdown_table(lines: list[str]) -> tuple[list[str], list[list[str]]] | None:
    """(header, rows) when the lines are a Markdown table (a header, a --- rule, rows), else None."""
    if len(lines) < 2 or "|" not in lines[0] or not _TABLE_RULE.match(lines[1].strip()):
        return None
    return table_cells(lines[0]), [table_cells(line) for line in lines[2:] if line.strip()]


def _table(header: list[str], rows: list[list[str]]) -> Markup:
    head = Markup("").join(Markup("<th>{}</th>").format(inline(c)) for c in header)
    body = Markup("").join(
        Markup("<tr>{}</tr>").format(Markup("").join(Markup("<td>{}</td>").format(inline(c)) for c in row))
        for row in rows
    )
    return Markup(
        '<div class="table-wrap"><table class="results"><thead><tr>{}</tr></thead><tbody>{}</tbody></table></div>'
    ).format(head, body)


def render(text: str | None) -> Markup:
    """Blocks separated by their kind: a table, a list, a heading, a code fence, a paragraph."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    blocks: list[Markup] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.strip().startswith("```"):
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```")), len(lines)
            )
            blocks.append(Markup("<pre>{}</pre>").format("\n".join(lines[i + 1 : end])))
            i = end + 1
            continue
        if "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1].strip()):
            end = i + 2
            while end < len(lines) and "|" in lines[end] and lines[end].strip():
                end += 1
            header, rows = markdown_table(lines[i:end])
            blocks.append(_table(header, rows))
            i = end
            continue
        if heading := _HEADING.match(line):
            blocks.append(Markup('<p class="heading">{}</p>').format(inline(heading.group(2))))
            i += 1
            continue
        for pattern, tag in ((_BULLET, "ul"), (_NUMBERED, "ol")):
            if pattern.match(line):
                items = []
                while i < len(lines) and (item := pattern.match(lines[i])):
                    items.append(Markup("<li>{}</li>").format(inline(item.group(1))))
                    i += 1
                blocks.append(Markup(f"<{tag}>{{}}</{tag}>").format(Markup("").join(items)))
                break
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines, i):
                paragraph.append(inline(lines[i].strip()))
                i += 1
            if not paragraph:  # a line that starts a block nobody took: text as it is
                paragraph.append(inline(lines[i].strip()))
                i += 1
            blocks.append(Markup("<p>{}</p>").format(Markup("<br>").join(paragraph)))
    return Markup("").join(blocks)


def _starts_block(lines: list[str], i: int) -> bool:
    line = lines[i]
    return bool(
        _HEADING.match(line)
        or _BULLET.match(line)
        or _NUMBERED.match(line)
        or line.strip().startswith("```")
        or ("|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1].strip()))
    )
