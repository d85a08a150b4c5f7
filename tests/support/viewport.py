"""What a person sees in the browser tests: is this element on the screen and not covered, is
anything cut at the right edge. Measured in the page (getBoundingClientRect, elementFromPoint)."""

from __future__ import annotations


def in_view(locator) -> bool:
    """The element is inside the viewport and its middle is not covered by anything else (a sticky
    message box, a menu)."""
    return locator.evaluate(
        """(node) => {
             const r = node.getBoundingClientRect();
             if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return false;
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
             return hit !== null && (node === hit || node.contains(hit));
           }"""
    )


def cut_at_the_right(page) -> list[str]:
    """Visible elements that reach past the right edge of the screen, except inside a region that
    scrolls sideways on purpose (a wide table's wrapper)."""
    return page.evaluate(
        """() => {
             const out = [];
             for (const node of document.body.querySelectorAll("*")) {
               if (node.closest(".table-wrap, .visually-hidden, .skip-link")) continue;
               const r = node.getBoundingClientRect();
               if (r.width === 0 || r.height === 0) continue;
               if (r.right > document.documentElement.clientWidth + 1)
                 out.push(`${node.tagName.toLowerCase()}.${node.className} right=${Math.round(r.right)}`);
             }
             return out.slice(0, 10);
           }"""
    )
