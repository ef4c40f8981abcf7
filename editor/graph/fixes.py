"""One-click fixes for the three branch pairing errors (spec 08, check 7), as the reference's
own editor offers them: label an unlabelled branch edge, relabel an edge whose label names no
case, route a case no edge is labelled with.

A fix is proposed from the error (its keys locate it) and the level it is at; applying it is
an ordinary edit (:func:`editor.graph.edits.relabel_edge` or
:func:`editor.graph.edits.add_edge`), so it goes through the same checks as the forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from editor.graph.model import BranchNode, FoldNode, Graph, MapNode, NodeBody

__all__ = ["EdgeFix", "fix_for"]


@dataclass(frozen=True, slots=True)
class EdgeFix:
    """A fix of a branch's edges. ``kind``: ``label`` or ``relabel`` the edge at ``edge`` (its
    place in the level's edge list, from ``branch`` to ``target``) with one of ``choices`` (the
    cases no edge has yet, else every other case; the error's suggestion first); ``route`` the
    case ``case`` with a new edge to one of ``choices`` (the nodes of the level it may go to,
    those no edge reaches first, none chosen)."""

    kind: Literal["label", "relabel", "route"]
    branch: str
    choices: tuple[str, ...]
    edge: int | None = None
    target: str | None = None
    case: str | None = None


def _branch(graph: Graph, node_id: Any) -> BranchNode | None:
    found = None
    for node in graph.nodes:
        if node.id == node_id:
            found = node
    return found if isinstance(found, BranchNode) else None


def _labels(graph: Graph, branch: BranchNode, *, besides: Any = None) -> list[str]:
    """The labels to offer an edge of ``branch``: the cases no edge is labelled with yet, else
    every case (but ``besides``)."""
    used = {edge.label for edge in graph.edges if edge.source == branch.id}
    names = [name for name in dict.fromkeys(case.name for case in branch.cases) if name != besides]
    unrouted = [name for name in names if name not in used]
    return unrouted or names


def fix_for(error: Mapping[str, Any], graph: Graph) -> EdgeFix | None:
    """The fix of ``error`` (a branch pairing error of the level ``graph`` is), or ``None``."""
    code = error.get("code")
    branch = _branch(graph, error.get("node"))
    if branch is None or not branch.cases:
        return None
    if code == "branch_case_without_edge":
        return _route(graph, branch, str(error.get("case", "")))
    target = error.get("to")
    if code == "branch_edge_without_label":
        index = _edge(graph, branch.id, target, None)
        choices = _labels(graph, branch)
        kind: Literal["label", "relabel"] = "label"
    elif code == "branch_edge_without_case":
        label = error.get("label")
        index = _edge(graph, branch.id, target, label)
        choices = _labels(graph, branch, besides=label)
        suggestion = error.get("suggestion")
        if isinstance(suggestion, str) and suggestion in choices:
            choices = [suggestion, *(name for name in choices if name != suggestion)]
        kind = "relabel"
    else:
        return None
    if index is None or not choices:
        return None
    return EdgeFix(kind, branch.id, tuple(choices), edge=index, target=str(target))


def _edge(graph: Graph, source: str, target: Any, label: Any) -> int | None:
    for index, edge in enumerate(graph.edges):
        if edge.source == source and edge.target == target and edge.label == label:
            return index
    return None


def _route(graph: Graph, branch: BranchNode, case: str) -> EdgeFix | None:
    """The nodes a case may be routed to: not a body, not the branch, and not a node the branch
    is reached from (that would close a cycle); those no edge reaches yet first."""
    bodies = {
        node.body.node
        for node in graph.nodes
        if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
    }
    upstream = {branch.id}
    pending = [branch.id]
    while pending:
        here = pending.pop()
        for edge in graph.edges:
            if edge.target == here and edge.source not in upstream:
                upstream.add(edge.source)
                pending.append(edge.source)
    reached = {edge.target for edge in graph.edges}
    targets = [
        node_id
        for node_id in dict.fromkeys(node.id for node in graph.nodes)
        if node_id not in upstream and node_id not in bodies
    ]
    targets.sort(key=lambda node_id: node_id in reached)
    if not targets:
        return None
    return EdgeFix("route", branch.id, tuple(targets), case=case)
