"""Edits the editor's forms make to a draft, as pure functions on its wire value.

A draft that parses is turned into its wire value (:func:`editor.graph.wire_value`),
changed here, and written back with :func:`format_draft`: wire-order JSON
indented by two spaces (spec 06). Each edit returns a new value and leaves its
argument alone; a refused edit raises :class:`EditRefused` naming the field.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

from editor.graph.errors import GraphError, MalformedDocument
from editor.graph.parsing import parse_graph
from editor.graph.wire import wire_value

__all__ = [
    "NEW_NODE_DEFAULTS",
    "EditRefused",
    "add_edge",
    "add_node",
    "delete_edge",
    "delete_node",
    "format_draft",
    "rename_node",
    "set_payload_field",
]

Value = dict[str, Any]

#: What **Add node** starts from, per kind: defaults that validate where they can (spec 06).
NEW_NODE_DEFAULTS: dict[str, Value] = {
    "agent": {"agent_hash": ""},
    "tool": {"tool": "echo"},
    "gate": {"approval_schema": {"type": "object"}},
    "branch": {"cases": [{"name": "yes", "when": {"kind": "expression", "value": "true"}}]},
    "map": {"over": "items", "concurrency": 1, "body": {"kind": "node", "value": ""}},
    "fold": {
        "body": {"kind": "node", "value": ""},
        "max_iterations": 3,
        "stop_when": "done == true",
        "join": {"kind": "last"},
    },
}


class EditRefused(GraphError, ValueError):
    """An edit that would make the draft wrong in a way the form can name."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


def format_draft(value: Value) -> str:
    """A draft's text: its wire value as JSON indented by two spaces, keys in wire order.

    A value that no longer parses (a form cannot produce one, but a caller might)
    is written as it is, so nothing typed is lost.
    """
    with contextlib.suppress(MalformedDocument):
        value = wire_value(parse_graph(value))
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _node_ids(value: Value) -> list[str]:
    return [node["payload"]["id"] for node in value["nodes"]]


def _find(value: Value, node_id: str) -> Value:
    for node in reversed(value["nodes"]):
        if node["payload"]["id"] == node_id:
            return node
    raise EditRefused("id", f"there is no node `{node_id}`")


def add_node(value: Value, kind: str, node_id: str) -> Value:
    """A new node of ``kind`` with id ``node_id``, from the defaults, at the end."""
    if kind not in NEW_NODE_DEFAULTS:
        raise EditRefused("kind", f"`{kind}` is not a node kind")
    if not node_id.strip():
        raise EditRefused("id", "a node needs an id")
    if node_id in _node_ids(value):
        raise EditRefused("id", f"id `{node_id}` is already used")
    result = copy.deepcopy(value)
    payload = {"id": node_id, **copy.deepcopy(NEW_NODE_DEFAULTS[kind])}
    result["nodes"].append({"kind": kind, "payload": payload})
    return result


def delete_node(value: Value, node_id: str) -> Value:
    """Without ``node_id``, and without the edges that touched it."""
    _find(value, node_id)
    result = copy.deepcopy(value)
    result["nodes"] = [node for node in result["nodes"] if node["payload"]["id"] != node_id]
    result["edges"] = [
        edge for edge in result["edges"] if node_id not in (edge["from"], edge["to"])
    ]
    return result


def rename_node(value: Value, old: str, new: str) -> Value:
    """``old`` renamed to ``new`` everywhere: the node, every edge and every body naming it."""
    if new == old:
        return value
    if not new.strip():
        raise EditRefused("id", "a node needs an id")
    if new in _node_ids(value):
        raise EditRefused("id", f"id `{new}` is already used")
    _find(value, old)
    result = copy.deepcopy(value)
    for node in result["nodes"]:
        payload = node["payload"]
        if payload["id"] == old:
            payload["id"] = new
        body = payload.get("body")
        if isinstance(body, dict) and body.get("kind") == "node" and body.get("value") == old:
            body["value"] = new
    for edge in result["edges"]:
        if edge["from"] == old:
            edge["from"] = new
        if edge["to"] == old:
            edge["to"] = new
    return result


def set_payload_field(value: Value, node_id: str, field: str, field_value: Any) -> Value:
    """``field`` of ``node_id``'s payload set to ``field_value``; ``None`` removes it."""
    if field == "id":
        return rename_node(value, node_id, field_value)
    _find(value, node_id)
    result = copy.deepcopy(value)
    node = _find(result, node_id)
    if field_value is None:
        node["payload"].pop(field, None)
    else:
        node["payload"][field] = copy.deepcopy(field_value)
    return result


def add_edge(value: Value, source: str, target: str, label: str | None = None) -> Value:
    """A new edge at the end of the list."""
    ids = _node_ids(value)
    if source not in ids:
        raise EditRefused("from", f"there is no node `{source}`")
    if target not in ids:
        raise EditRefused("to", f"there is no node `{target}`")
    edge: Value = {"from": source, "to": target}
    if label:
        edge["label"] = label
    result = copy.deepcopy(value)
    result["edges"].append(edge)
    return result


def delete_edge(value: Value, index: int) -> Value:
    """Without the edge at ``index`` (the edge list's order)."""
    if not 0 <= index < len(value["edges"]):
        raise EditRefused("edge", f"there is no edge number {index + 1}")
    result = copy.deepcopy(value)
    del result["edges"][index]
    return result
