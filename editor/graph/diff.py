"""The structural diff of two graphs (spec 05, ``GET /v1/documents/{slug}/diff``).

Nodes are matched by id (the last node with an id, as spec 02 looks nodes up);
a node in both documents is *changed* when its kind or any payload field differs,
each difference reported with its path (``name``, ``input.text``,
``cases[1].when.value``) and its old and new values, a side omitted where the
field is absent. Edges are compared as a multiset of ``(from, to, label)``.
Values compare as JSON does: ``1`` and ``1.0`` differ.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from editor.graph.expressions import json_equal
from editor.graph.model import Graph
from editor.graph.wire import graph_hash, wire_value

__all__ = ["diff_graphs"]

_ABSENT = object()


def _field_changes(before: Any, after: Any, path: str, changes: list[dict[str, Any]]) -> None:
    if before is not _ABSENT and after is not _ABSENT and json_equal(before, after):
        return
    if type(before) is dict and type(after) is dict:
        for key in sorted(before.keys() | after.keys()):
            _field_changes(
                before.get(key, _ABSENT),
                after.get(key, _ABSENT),
                f"{path}.{key}" if path else key,
                changes,
            )
        return
    if type(before) is list and type(after) is list:
        for index in range(max(len(before), len(after))):
            _field_changes(
                before[index] if index < len(before) else _ABSENT,
                after[index] if index < len(after) else _ABSENT,
                f"{path}[{index}]",
                changes,
            )
        return
    change: dict[str, Any] = {"path": path}
    if before is not _ABSENT:
        change["from"] = before
    if after is not _ABSENT:
        change["to"] = after
    changes.append(change)


def _nodes_by_id(value: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    for node in value["nodes"]:
        nodes[node["payload"]["id"]] = node
    return nodes


def _edge_key(edge: dict[str, Any]) -> tuple[str, str, str | None]:
    return edge["from"], edge["to"], edge.get("label")


def _edge_changes(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The edges of ``ours`` beyond the multiset of ``theirs``, in ``ours``' order."""
    remaining = Counter(_edge_key(edge) for edge in theirs)
    extra = []
    for edge in ours:
        key = _edge_key(edge)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            extra.append(edge)
    return extra


def diff_graphs(before: Graph, after: Graph) -> dict[str, Any]:
    """What changed from ``before`` to ``after``: nodes added, removed and changed, edges."""
    old, new = wire_value(before), wire_value(after)
    old_nodes, new_nodes = _nodes_by_id(old), _nodes_by_id(new)
    changed = []
    for node_id, node in new_nodes.items():
        previous = old_nodes.get(node_id)
        if previous is None:
            continue
        fields: list[dict[str, Any]] = []
        if previous["kind"] != node["kind"]:
            fields.append({"path": "kind", "from": previous["kind"], "to": node["kind"]})
        _field_changes(previous["payload"], node["payload"], "", fields)
        if fields:
            changed.append({"node": node_id, "fields": fields})
    return {
        "identical": graph_hash(before) == graph_hash(after),
        "nodes": {
            "added": [node_id for node_id in new_nodes if node_id not in old_nodes],
            "removed": [node_id for node_id in old_nodes if node_id not in new_nodes],
            "changed": changed,
        },
        "edges": {
            "added": _edge_changes(new["edges"], old["edges"]),
            "removed": _edge_changes(old["edges"], new["edges"]),
        },
    }
