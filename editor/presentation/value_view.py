"""The value that arrived at a gate, shown so a person can read it (``docs/inbox.md``): a
string as text with its line breaks, a number, boolean or ``null`` as itself, and an object or
array as a tree of ``<details>`` elements that open and close without script (the
first two levels open). The card keeps the whole value as formatted JSON too, behind **Copy
JSON** and a *JSON* disclosure.

A card must stay cheap to render (the inbox's first page shows 50), so the tree shows at most
:data:`MAX_ENTRIES` entries and strings of at most :data:`MAX_TEXT` characters, and says what
it left out; the JSON beside it is always whole. Built with :func:`html.escape`, like the
approval fields.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

__all__ = ["MAX_ENTRIES", "MAX_TEXT", "value_html"]

MAX_ENTRIES = 300
MAX_TEXT = 20_000
#: Levels of the tree shown open; deeper ones start closed.
OPEN_LEVELS = 2
#: Deeper than this, a value is shown as compact JSON rather than as more levels.
MAX_DEPTH = 24


class _Budget:
    __slots__ = ("left",)

    def __init__(self, entries: int) -> None:
        self.left = entries


def _text(value: str) -> str:
    if len(value) <= MAX_TEXT:
        return f'<span class="jt-string">{escape(value)}</span>'
    rest = len(value) - MAX_TEXT
    return (
        f'<span class="jt-string">{escape(value[:MAX_TEXT])}</span>'
        f'<span class="muted"> … {rest:,} more characters (see the JSON)</span>'
    )


def _empty(value: dict[str, Any] | list[Any]) -> str:
    return f'<code class="jt-scalar">{"{}" if isinstance(value, dict) else "[]"}</code>'


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _text(value)
    return f'<code class="jt-scalar">{escape(json.dumps(value, ensure_ascii=False))}</code>'


def _size(value: dict[str, Any] | list[Any]) -> str:
    count = len(value)
    if isinstance(value, dict):
        return f"{{{count} key{'s' if count != 1 else ''}}}"
    return f"[{count} item{'s' if count != 1 else ''}]"


def _entries(value: dict[str, Any] | list[Any], depth: int, budget: _Budget) -> str:
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    rows = []
    total = len(value)
    for shown, (key, item) in enumerate(pairs):
        if budget.left <= 0:
            rows.append(f'<li class="muted">… {total - shown:,} more (see the JSON)</li>')
            break
        budget.left -= 1
        label = escape(str(key)) if isinstance(value, dict) else str(key)
        key_html = f'<span class="jt-key">{label}</span>'
        if isinstance(item, dict | list) and item:
            rows.append(f"<li>{_branch(key_html, item, depth + 1, budget)}</li>")
        elif isinstance(item, dict | list):
            rows.append(f"<li>{key_html} {_empty(item)}</li>")
        else:
            rows.append(f"<li>{key_html} {_scalar(item)}</li>")
    return f'<ul class="json-tree">{"".join(rows)}</ul>'


def _branch(key_html: str, value: dict[str, Any] | list[Any], depth: int, budget: _Budget) -> str:
    summary = f'<summary>{key_html} <span class="muted">{_size(value)}</span></summary>'
    if depth > MAX_DEPTH:
        text = escape(json.dumps(value, ensure_ascii=False))
        return f'<details>{summary}<code class="jt-scalar">{text}</code></details>'
    opened = " open" if depth < OPEN_LEVELS else ""
    return f"<details{opened}>{summary}{_entries(value, depth, budget)}</details>"


def value_html(value: Any) -> str:
    """``value`` as readable HTML (every piece escaped)."""
    if isinstance(value, str):
        return f'<div class="value-text">{_text(value)}</div>'
    if isinstance(value, dict | list) and value:
        return f'<div class="value-tree">{_entries(value, 0, _Budget(MAX_ENTRIES))}</div>'
    if isinstance(value, dict | list):
        return f'<div class="value-tree">{_empty(value)}</div>'
    return f'<div class="value-tree">{_scalar(value)}</div>'
