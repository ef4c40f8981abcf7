"""What the editor page shows beside its verdict beyond the errors: the **hints** (shown and
counted apart, never blocking), where each error's, held field's and hint's link puts the
focus (the field it is about, not the node's id), and the one-click fixes of the three branch
pairing errors (:mod:`editor.graph.fixes`; their forms post to **Relabel**,
:mod:`editor.views.editor_fixes`, or to **Add edge**).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from editor.graph.dataflow import graph_at
from editor.graph.fixes import EdgeFix, fix_for
from editor.presentation import node_form
from editor.presentation.wiring import focus_id, hint_field_key
from editor.services.documents import editing
from editor.services.documents.editing import CheckedDraft
from editor.services.documents.hints import draft_hints

__all__ = ["error_extras", "held_focus", "hint_rows"]


def _node_url(page: str, node: str, level: tuple[str, ...]) -> str:
    owners = "".join(f"&in={quote(owner, safe='')}" for owner in level)
    return f"{page}?node={quote(node, safe='')}{owners}"


#: The most hints listed under the verdict (all are counted).
MAX_LISTED = 100


class HintRows(list[dict[str, Any]]):
    """The hints listed, and ``total``: how many there are."""

    total: int = 0


def hint_rows(ed: CheckedDraft, page: str) -> HintRows:
    """The hints under the verdict (the first :data:`MAX_LISTED`): each with its node's link
    (focusing the field it is about), and for an edge listed twice the place of the one to
    remove."""
    hints = draft_hints(ed)
    rows = HintRows()
    rows.total = len(hints)
    for hint in hints[:MAX_LISTED]:
        node = ed.node(hint.node, hint.level) if hint.node else None
        row: dict[str, Any] = {
            "code": hint.code,
            "message": hint.message,
            "node": hint.node,
            "level": list(hint.level),
            "url": _node_url(page, hint.node, hint.level)
            if node is not None and hint.node
            else None,
            "focus": focus_id(hint_field_key(hint), node) if node is not None else "",
            "edge": hint.edge,
        }
        rows.append(row)
    return rows


def error_extras(ed: CheckedDraft, error: dict[str, Any], where: tuple[str, ...]) -> dict[str, Any]:
    """For an error row: the control its link focuses, and its one-click fix, if it has one."""
    target = editing.error_node(error)
    node = ed.node(target, where) if target is not None else None
    key = node_form.field_key_of_error(error, node) if node is not None else ""
    extras: dict[str, Any] = {"focus": focus_id(key, node) if node is not None else ""}
    if ed.can_edit and ed.graph is not None and error.get("code", "").startswith("branch_"):
        level_graph = graph_at(ed.graph, where)
        fix = fix_for(error, level_graph) if level_graph is not None else None
        if fix is not None:
            extras["fix"] = _fix_view(fix, where)
    return extras


def _fix_view(fix: EdgeFix, where: tuple[str, ...]) -> dict[str, Any]:
    return {
        "kind": fix.kind,
        "branch": fix.branch,
        "edge": fix.edge,
        "target": fix.target,
        "case": fix.case,
        "choices": list(fix.choices),
        "level": list(where),
        # A name unique on the page for each fix's controls.
        "key": "-".join(
            quote(part, safe="")
            for part in (fix.kind, *where, fix.branch, fix.target or fix.case or "")
        ),
    }


def held_focus(ed: CheckedDraft, entry: dict[str, Any]) -> str:
    """The control a held field's link focuses: the field holding what was typed."""
    node = ed.node(entry["node"], tuple(entry.get("level", ())))
    return focus_id(str(entry["field"]), node) if node is not None else ""
