"""axe-core in the browser tests: the vendored axe.min.js (tests/support/vendor/, MPL-2.0) injected
into a page, offline, and its violations of a given impact."""

from __future__ import annotations

from pathlib import Path

AXE_SOURCE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
SERIOUS = ("serious", "critical")


def axe_violations(page) -> list[dict]:
    """Every violation axe finds on the page as it is now: rule id, impact, and where (up to 5)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SOURCE + "\n;0")  # a DevTools evaluation: the page's CSP does not apply
    return page.evaluate(
        """axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations.map((v) => ({
             id: v.id, impact: v.impact,
             nodes: v.nodes.length, where: v.nodes.slice(0, 5).map((n) => n.target.join(" "))})))"""
    )


def serious(violations: list[dict]) -> list[dict]:
    return [v for v in violations if v["impact"] in SERIOUS]
