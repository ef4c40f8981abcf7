"""The compare page's rows (``{% load compare %}``, ``templates/runs/compare.html``): one row
per node, both runs side by side (``editor.services.runs.compare.NodeComparison``).

Built in Python rather than by the page's template: two runs of 500 nodes are 500 rows, and the
template's per-row conditionals were most of the page's server time. Every value is escaped with
:func:`html.escape` (``quote=True``, as Django's own ``escape``), and the markup is the one the
template had.
"""

from __future__ import annotations

from html import escape
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from editor.graph.jsonio import pretty_json
from editor.templatetags.gatehouse import json_text

register = template.Library()

_SAME = '<span class="muted">same</span>'


def _differences(found: list[dict[str, Any]]) -> str:
    if not found:
        return _SAME
    items = []
    for change in found:
        kind = change["change"]
        text = f"{change['path']}: {kind}"
        if kind == "changed":
            text += f" {json_text(change['a'])} → {json_text(change['b'])}"
        elif kind == "added":
            text += f" {json_text(change['b'])}"
        elif kind == "removed":
            text += f" {json_text(change['a'])}"
        items.append(f"<li>{escape(text)}</li>")
    return f'<ul class="diff-list">{"".join(items)}</ul>'


def _both(summary: str, a: Any, b: Any) -> str:
    return (
        f"<details><summary>{summary}</summary>"
        f'<pre class="json-value">{escape(pretty_json(a))}</pre>'
        f'<pre class="json-value">{escape(pretty_json(b))}</pre></details>'
    )


def _ms(value: int | None) -> str:
    return "—" if value is None else str(value)


@register.simple_tag
def compare_row(node: Any) -> SafeString:
    """One node's row: its states, the differences of its input and output (both values
    behind a disclosure), its durations and tokens."""
    a, b = node.a, node.b
    same = f" {_SAME}" if node.same else ""
    row = (
        f'<tr class="{"" if node.same else "differs"}" data-node="{escape(node.node)}">'
        f'<th scope="row"><code>{escape(node.node)}</code>{same}</th>'
        f"<td>{escape(a.state)}</td><td>{escape(b.state)}</td>"
        f"<td>{_differences(node.input_diff)}{_both('Both inputs', a.input, b.input)}</td>"
        f"<td>{_differences(node.output_diff)}{_both('Both outputs', a.output, b.output)}</td>"
        f"<td>{_ms(a.duration_ms)} / {_ms(b.duration_ms)} ms</td>"
        f"<td>{a.input_tokens}+{a.output_tokens} / {b.input_tokens}+{b.output_tokens}</td>"
        "</tr>"
    )
    # Every piece above is constant markup, a number, or escaped text.
    return mark_safe(row)
