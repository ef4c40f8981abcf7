"""axe-core in the browser tests: inject it into the page under test and fail on any violation.

The vendored ``axe.min.js`` (``tests/functional/vendor``) is evaluated through the DevTools
protocol, which the page's Content-Security-Policy does not govern, so the app's CSP stays as it
is in production.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

__all__ = ["assert_accessible"]

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"


@cache
def _source() -> str:
    return AXE.read_text(encoding="utf-8")


def violations(page: Page, *, include: str | None = None) -> list[dict[str, Any]]:
    """axe-core's violations on ``page`` now: every rule of its default set (WCAG 2.x A and
    AA, and its best practices)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(_source() + "\n;undefined")
    return page.evaluate(
        """async (include) => {
            const context = include ? { include: [include] } : document;
            const result = await window.axe.run(context, { resultTypes: ["violations"] });
            return result.violations.map((v) => ({
                id: v.id,
                help: v.help,
                nodes: v.nodes.slice(0, 5).map(
                    (n) => n.target.join(" ") + " — " + n.failureSummary
                ),
            }));
        }""",
        include,
    )


def assert_accessible(page: Page, *, include: str | None = None) -> None:
    """Fail, listing them, when axe-core finds any violation on ``page``."""
    found = violations(page, include=include)
    assert not found, "axe-core found:\n" + "\n".join(
        f"- {v['id']}: {v['help']}\n    " + "\n    ".join(v["nodes"]) for v in found
    )
