"""Accessibility checks of the browser tests: axe-core (vendored under ``vendor/``) run in a
page, every rule of its default set (WCAG 2.x A and AA, and its best practices)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

__all__ = ["assert_accessible", "axe_violations"]

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"

_RUN = """
async () => {
  const results = await axe.run(document, {resultTypes: ["violations"]});
  return results.violations.map((violation) => ({
    id: violation.id,
    impact: violation.impact,
    help: violation.help,
    nodes: violation.nodes.map((node) => node.target.join(" ")),
  }));
}
"""


@cache
def _source() -> str:
    return AXE.read_text(encoding="utf-8")


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now. The engine is evaluated through the
    browser's debugging protocol, which the page's Content-Security-Policy does not govern."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_source() + "\n;undefined")
    return page.evaluate(_RUN)


def assert_accessible(page: Page) -> None:
    violations = axe_violations(page)
    assert violations == [], "\n".join(
        f"{item['id']} ({item['impact']}): {item['help']} at {', '.join(item['nodes'][:5])}"
        for item in violations
    )
