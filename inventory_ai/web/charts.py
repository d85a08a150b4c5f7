"""Charts drawn on the server as SVG: a material's stock over time, and bars of stock value.

Server-drawn rather than a JavaScript charting library: two simple shapes, drawn the same in the
page, a reloaded page and a screenshot, with no script to vendor and keep up to date, nothing that
needs JavaScript to show, and nothing the page's content security policy would have to allow (no
inline styles: colours and sizes come from classes in static/app.css). Each chart is an image with a
name and a description for screen readers (the bars' description lists every figure).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from markupsafe import Markup

from inventory_ai.services.shown import number

# The drawing's own units (viewBox); the page scales it to the column's width.
WIDTH, HEIGHT = 480, 200
LEFT, RIGHT, TOP, BOTTOM = 60, 10, 10, 24


def _nice_ceiling(value: Decimal) -> Decimal:
    """The axis top: 1, 2 or 5 times a power of ten, at or above the value."""
    if value <= 0:
        return Decimal(1)
    magnitude = Decimal(10) ** (len(str(int(value))) - 1)
    for step in (1, 2, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _num(value: float) -> str:
    return f"{value:.1f}"


def stock_line(
    points: Sequence[tuple[datetime, Decimal]],
    reorder_point: tuple[Decimal, str] | None,
    days: tuple[str, str],
    label: str,
    description: str,
) -> Markup:
    """Stock over time as a step line (a level holds until the next movement), with the reorder
    point (its level, its words) dashed across. `points` run from the first instant to the last,
    in order; `days` name the first and the last day under the axis. The unit is in the caption."""
    start, end = points[0][0], points[-1][0]
    span = max((end - start).total_seconds(), 1.0)
    reorder = reorder_point[0] if reorder_point else Decimal(0)
    top = _nice_ceiling(max([q for _, q in points] + [reorder]) * Decimal("1.05"))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(when: datetime) -> float:
        return LEFT + plot_w * (when - start).total_seconds() / span

    def y(quantity: Decimal) -> float:
        return TOP + plot_h * float(1 - quantity / top)

    steps = [f"M{_num(x(points[0][0]))} {_num(y(points[0][1]))}"]
    for (_, before), (when, level) in zip(points, points[1:], strict=False):
        steps.append(f"L{_num(x(when))} {_num(y(before))}")
        steps.append(f"L{_num(x(when))} {_num(y(level))}")
    parts = [
        Markup('<line class="axis" x1="{0}" y1="{1}" x2="{2}" y2="{1}"/>').format(
            LEFT, _num(y(Decimal(0))), WIDTH - RIGHT
        )
    ]
    for tick in (Decimal(0), top / 2, top):
        parts.append(
            Markup('<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>').format(
                LEFT - 4, _num(y(tick) + 4), number(tick)
            )
        )
        if tick:
            parts.append(
                Markup('<line class="grid" x1="{0}" y1="{1}" x2="{2}" y2="{1}"/>').format(
                    LEFT, _num(y(tick)), WIDTH - RIGHT
                )
            )
    if reorder_point:
        parts.append(
            Markup(
                '<line class="reorder" x1="{0}" y1="{1}" x2="{2}" y2="{1}"/>'
                '<text class="reorder-label" x="{2}" y="{3}" text-anchor="end">{4} {5}</text>'
            ).format(
                LEFT,
                _num(y(reorder)),
                WIDTH - RIGHT,
                _num(y(reorder) - 4),
                reorder_point[1],
                number(reorder),
            )
        )
    parts.append(Markup('<path class="line" d="{}"/>').format(" ".join(steps)))
    for day, anchor, at in ((days[0], "start", LEFT), (days[1], "end", WIDTH - RIGHT)):
        parts.append(
            Markup('<text class="tick" x="{}" y="{}" text-anchor="{}">{}</text>').format(
                at, HEIGHT - 6, anchor, day
            )
        )
    return _svg("stock-line", WIDTH, HEIGHT, label, description, parts)


def bars(items: Sequence[tuple[str, Decimal]], label: str, value_text) -> Markup:
    """Horizontal bars, largest first as given; `value_text(value)` writes the figure after a bar."""
    row, label_w, value_w = 24, 150, 96
    height = row * len(items) + 6
    top = max([v for _, v in items] + [Decimal(1)])
    parts = []
    for i, (name, value) in enumerate(items):
        y = 3 + i * row
        length = (WIDTH - label_w - value_w) * float(value / top)
        shown = name if len(name) <= 20 else name[:19] + "…"
        parts.append(
            Markup(
                '<text class="label" x="{}" y="{}" text-anchor="end">{}</text>'
                '<rect class="bar" x="{}" y="{}" width="{}" height="{}"/>'
                '<text class="value" x="{}" y="{}">{}</text>'
            ).format(
                label_w - 6,
                y + 15,
                shown,
                label_w,
                y + 3,
                _num(max(length, 1.0)),
                row - 8,
                _num(label_w + max(length, 1.0) + 4),
                y + 15,
                value_text(value),
            )  # fmt: skip
        )
    description = "; ".join(f"{name}: {value_text(value)}" for name, value in items)
    return _svg("bars", WIDTH, height, label, description, parts)


def _svg(kind: str, width: int, height: int, label: str, description: str, parts: list[Markup]) -> Markup:
    return Markup(
        '<svg class="chart {}" viewBox="0 0 {} {}" role="img" aria-label="{}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title><desc>{}</desc>{}</svg>'
    ).format(kind, width, height, label, label, description, Markup("").join(parts))
