"""The editor's hints and a node's data, for a draft: what :mod:`editor.graph.hints` and
:mod:`editor.graph.dataflow` say of its parsed graph, and what the editor page shows of them
beside its verdict (:mod:`.editor_page` puts them in its answer).

Hints are made once per draft text (an answer to a keystroke reads them twice: the list under
the verdict and the fields beside which they are shown), and kept for the few drafts this
process answered last. They are never part of the verdict: the draft's errors, what blocks
**Freeze** and the hash are validation's alone.

Beside the hints: where the link of an error, a held field or a hint puts the focus (the field
it is about, not the node's id), and the one-click fixes of the three branch pairing errors
(:mod:`editor.graph.fixes`), applied by the named edits **Relabel** and **Add edge**.

What the latest test run gave a node (the paths its pickers offer first) is the runs family's
to read, a layer above this one: it is asked through :func:`connect_tested_input`, which
:mod:`editor.apps` calls at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from editor.graph import ErrorData, SubgraphPath
from editor.graph.dataflow import DataFlow, graph_at
from editor.graph.fixes import EdgeFix, fix_for
from editor.graph.hints import Hint, document_hints
from editor.presentation import node_form
from editor.presentation.wiring import NodeWiring, focus_id, hint_field_key, hints_by_field
from editor.recent import Recent
from editor.services.documents.editing import CheckedDraft, ParsedDraft, error_node, node_link

__all__ = [
    "MAX_LISTED",
    "FixView",
    "HintList",
    "HintRow",
    "TestedInput",
    "connect_tested_input",
    "draft_hints",
    "error_fix",
    "error_focus",
    "field_hints",
    "held_focus",
    "hint_list",
    "node_hints",
    "node_wiring",
]

_hints: Recent[str, tuple[Hint, ...]] = Recent(8)

#: The most hints listed under the verdict (all are counted).
MAX_LISTED = 100

#: What the latest test run of a document (its slug) gave one of its top-level nodes (its id),
#: ``MISSING`` when none did.
TestedInput = Callable[[str, str], Any]

_tested_input: list[TestedInput] = []


def connect_tested_input(reader: TestedInput) -> None:
    """Where the pickers read what the latest test run gave a node (``editor.apps`` connects
    ``runs.test_nodes.offered_value``); unconnected, they offer the schemas' paths alone."""
    _tested_input[:] = [reader]


def draft_hints(draft: ParsedDraft) -> tuple[Hint, ...]:
    """Every hint of the draft (none while it does not parse)."""
    if draft.graph is None:
        return ()
    found = _hints.get(draft.text)
    if found is None:
        found = tuple(document_hints(draft.graph))
        _hints.put(draft.text, found)
    return found


def node_hints(draft: ParsedDraft, node_id: str, level: SubgraphPath = ()) -> list[Hint]:
    """The hints about one node of ``level``."""
    return [
        hint
        for hint in draft_hints(draft)
        if hint.level == level and hint.node == node_id and hint.code != "duplicate_edge"
    ]


def field_hints(draft: ParsedDraft, node_id: str, level: SubgraphPath = ()) -> dict[str, list[str]]:
    """The hints of one node by the key of the node form's field they are shown beside."""
    return hints_by_field(node_hints(draft, node_id, level))


def node_wiring(draft: ParsedDraft, node_id: str, level: SubgraphPath = ()) -> NodeWiring | None:
    """What flows into and out of ``node_id``, and what its reference fields offer: for a
    top-level node, what the latest test run gave it first (asked only when a picker is
    drawn)."""
    if draft.graph is None:
        return None
    tested = None
    if not level and _tested_input:
        reader, slug = _tested_input[0], draft.slug

        def tested() -> Any:
            return reader(slug, node_id)

    return NodeWiring(DataFlow(draft.graph), level, node_id, tested)


# --- Beside the verdict -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HintRow:
    """One hint under the verdict: its node's link (focusing the field it is about), and for
    an edge listed twice the place of the one to remove."""

    code: str
    message: str
    node: str | None
    level: list[str]
    url: str | None
    focus: str
    edge: int | None


@dataclass(frozen=True, slots=True)
class HintList:
    """The hints listed under the verdict (the first :data:`MAX_LISTED`), and how many there
    are."""

    rows: list[HintRow] = field(default_factory=list)
    total: int = 0


def hint_list(checked: CheckedDraft) -> HintList:
    """The hints under the verdict of ``checked``."""
    hints = draft_hints(checked)
    rows = []
    for hint in hints[:MAX_LISTED]:
        node = checked.node(hint.node, hint.level) if hint.node else None
        rows.append(
            HintRow(
                code=hint.code,
                message=hint.message,
                node=hint.node,
                level=list(hint.level),
                url=node_link(checked.page_url, hint.node, hint.level)
                if node is not None and hint.node
                else None,
                focus=focus_id(hint_field_key(hint), node) if node is not None else "",
                edge=hint.edge,
            )
        )
    return HintList(rows, len(hints))


@dataclass(frozen=True, slots=True)
class FixView:
    """A one-click fix beside a branch pairing error: ``kind`` ``label``/``relabel`` (a
    **Relabel** of the edge at ``edge``, from ``branch`` to ``target``, with one of
    ``choices``) or ``route`` (an **Add edge** of ``case`` from ``branch`` to one of
    ``choices``), at ``level``; ``key`` names its controls uniquely on the page."""

    kind: str
    branch: str
    edge: int | None
    target: str | None
    case: str | None
    choices: list[str]
    level: list[str]
    key: str


def error_focus(checked: CheckedDraft, error: ErrorData, where: SubgraphPath) -> str:
    """The control an error's link focuses: the field in error (``""``: the form's first)."""
    target = error_node(error)
    node = checked.node(target, where) if target is not None else None
    if node is None:
        return ""
    return focus_id(node_form.field_key_of_error(error, node), node)


def error_fix(checked: CheckedDraft, error: ErrorData, where: SubgraphPath) -> FixView | None:
    """The one-click fix of a branch pairing error, for an author (``None``: none)."""
    if not (checked.can_edit and checked.graph is not None):
        return None
    if not str(error.get("code", "")).startswith("branch_"):
        return None
    level_graph = graph_at(checked.graph, where)
    fix = fix_for(error, level_graph) if level_graph is not None else None
    return _fix_view(fix, where) if fix is not None else None


def _fix_view(fix: EdgeFix, where: SubgraphPath) -> FixView:
    return FixView(
        kind=fix.kind,
        branch=fix.branch,
        edge=fix.edge,
        target=fix.target,
        case=fix.case,
        choices=list(fix.choices),
        level=list(where),
        key="-".join(
            quote(part, safe="")
            for part in (fix.kind, *where, fix.branch, fix.target or fix.case or "")
        ),
    )


def held_focus(checked: CheckedDraft, entry: dict[str, Any]) -> str:
    """The control a held field's link focuses: the field holding what was typed."""
    node = checked.node(entry["node"], tuple(entry.get("level", ())))
    return focus_id(str(entry["field"]), node) if node is not None else ""
