"""Assertions about rendered pages shared by the integration tests."""

from __future__ import annotations

import re

__all__ = ["assert_no_inline_script"]

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.DOTALL)


def assert_no_inline_script(page: str) -> None:
    """Every ``<script>`` loads one of our static files and carries no code of its own."""
    for attributes, body in _SCRIPT.findall(page):
        assert body.strip() == "", f"inline script: {body[:80]!r}"
        assert re.search(r'\bsrc="/static/[^"]+"', attributes), (
            f"script without our src: {attributes}"
        )
    assert page.count("<script") == len(_SCRIPT.findall(page))
