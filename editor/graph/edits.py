"""Edits the editor's forms make to a draft, as pure functions on its wire value.

A draft that parses is turned into its wire value (:func:`editor.graph.wire_value`),
changed here, and written back with :func:`format_draft`: wire-order JSON
indented by two spaces (spec 06). Each edit returns a new value and leaves its
argument alone; a refused edit raises :class:`EditRefused` naming the field.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

import orjson

from editor.graph.dataflow import DataFlow, array_paths, shape_paths
from editor.graph.errors import GraphError, MalformedDocument
from editor.graph.jsonio import pretty_json
from editor.graph.model import SubgraphPath
from editor.graph.parsing import parse_graph
from editor.graph.wire import wire_value

__all__ = [
    "NEW_NODE_DEFAULTS",
    "EditRefused",
    "add_edge",
    "add_node",
    "choose_over",
    "delete_edge",
    "delete_node",
    "format_draft",
    "free_id",
    "level_value",
    "relabel_edge",
    "rename_node",
    "update_node",
]

Value = dict[str, Any]

#: What **Add node** starts from, per kind: defaults that validate where they can (spec 06).
NEW_NODE_DEFAULTS: dict[str, Value] = {
    "agent": {"agent_hash": ""},
    "tool": {"tool": "echo"},
    # Approve / Reject and a comment: the approver gets the two buttons at once (the first
    # required boolean is the decision, and a `comment` replaces the card's own).
    "gate": {
        "approval_schema": {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean", "title": "Approve"},
                "comment": {"type": "string", "title": "Comment"},
            },
            "required": ["approved"],
        }
    },
    "branch": {"cases": [{"name": "yes", "when": {"kind": "expression", "value": "true"}}]},
    "map": {"over": "items", "concurrency": 1, "body": {"kind": "node", "value": ""}},
    "fold": {
        "body": {"kind": "node", "value": ""},
        "max_iterations": 3,
        "stop_when": "done == true",
        "join": {"kind": "last"},
    },
    "delay": {"seconds": 3600},
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
    try:
        # orjson writes what json.dumps(indent=2, ensure_ascii=False) does, a hundred times
        # faster (the canonical writer uses it too).
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    except (TypeError, orjson.JSONEncodeError):
        # What orjson will not write (an integer beyond 64 bits): the standard library will.
        return pretty_json(value) + "\n"


def _node_ids(value: Value) -> list[str]:
    return [node["payload"]["id"] for node in value["nodes"]]


def _find(value: Value, node_id: str) -> Value:
    node: Value
    for node in reversed(value["nodes"]):
        if node["payload"]["id"] == node_id:
            return node
    raise EditRefused("id", f"there is no node `{node_id}`")


def level_value(value: Value, level: SubgraphPath) -> Value:
    """The document level ``level`` names: the top (``()``), or the subgraph body of each
    owner in turn (``("panel", "critiques")``); raises :class:`EditRefused` when there is none."""
    current = value
    for owner in level:
        try:
            body = _find(current, owner)["payload"].get("body")
        except EditRefused:
            raise EditRefused("level", f"there is no node `{owner}` holding a body") from None
        if not isinstance(body, dict) or body.get("kind") != "subgraph":
            raise EditRefused("level", f"`{owner}` has no subgraph body")
        inner = body.get("value")
        if not isinstance(inner, dict) or not isinstance(inner.get("nodes"), list):
            raise EditRefused("level", f"the body of `{owner}` is not a graph document")
        current = inner if "edges" in inner else {**inner, "edges": []}
    return current


def _at_level(value: Value, level: SubgraphPath, change: Callable[[Value], Value]) -> Value:
    """``value`` with the document level ``level`` replaced by ``change`` of it (a new value;
    only the path down to that level is copied)."""
    if not level:
        return change(value)
    owner, rest = level[0], level[1:]
    index = _index(value, owner)
    node = value["nodes"][index]
    body = node["payload"].get("body")
    if not isinstance(body, dict) or body.get("kind") != "subgraph":
        raise EditRefused("level", f"`{owner}` has no subgraph body")
    inner = level_value(value, (owner,))
    changed = _at_level(inner, rest, change)
    nodes = [*value["nodes"]]
    nodes[index] = {
        **node,
        "payload": {**node["payload"], "body": {"kind": "subgraph", "value": changed}},
    }
    return {**value, "nodes": nodes}


def _index(value: Value, node_id: str) -> int:
    """The place of the last node with ``node_id`` (as validation looks nodes up)."""
    for index in range(len(value["nodes"]) - 1, -1, -1):
        if value["nodes"][index]["payload"]["id"] == node_id:
            return index
    raise EditRefused("id", f"there is no node `{node_id}`")


def add_node(value: Value, kind: str, node_id: str, *, level: SubgraphPath = ()) -> Value:
    """A new node of ``kind`` with id ``node_id``, from the defaults, at the end."""
    if kind not in NEW_NODE_DEFAULTS:
        raise EditRefused("kind", f"`{kind}` is not a node kind")
    if not node_id.strip():
        raise EditRefused("id", "a node needs an id")

    def change(current: Value) -> Value:
        if node_id in _node_ids(current):
            raise EditRefused("id", f"id `{node_id}` is already used")
        payload = {"id": node_id, **copy.deepcopy(NEW_NODE_DEFAULTS[kind])}
        return {**current, "nodes": [*current["nodes"], {"kind": kind, "payload": payload}]}

    return _at_level(value, level, change)


def free_id(value: Value, kind: str, *, level: SubgraphPath = ()) -> str:
    """An id for a new node of ``kind`` that no node of ``level`` uses: ``kind``, ``kind2``…"""
    used = set(_node_ids(level_value(value, level)))
    number = 1
    while (candidate := kind if number == 1 else f"{kind}{number}") in used:
        number += 1
    return candidate


def delete_node(value: Value, node_id: str, *, level: SubgraphPath = ()) -> Value:
    """Without ``node_id``, and without the edges that touched it."""

    def change(current: Value) -> Value:
        _find(current, node_id)
        return {
            **current,
            "nodes": [node for node in current["nodes"] if node["payload"]["id"] != node_id],
            "edges": [
                edge for edge in current["edges"] if node_id not in (edge["from"], edge["to"])
            ],
        }

    return _at_level(value, level, change)


def rename_node(value: Value, old: str, new: str, *, level: SubgraphPath = ()) -> Value:
    """``old`` renamed to ``new`` everywhere in its level: the node, every edge and every body
    naming it."""
    if new == old:
        return value
    if not new.strip():
        # Said after "it" where the field is held back: "not saved: it is empty, …".
        raise EditRefused("id", "is empty, and every node needs an id")

    def change(current: Value) -> Value:
        if new in _node_ids(current):
            raise EditRefused("id", f"id `{new}` is already used")
        _find(current, old)
        result = copy.deepcopy(current)
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

    return _at_level(value, level, change)


def update_node(
    value: Value,
    node_id: str,
    fields: dict[str, Any],
    *,
    new_id: str | None = None,
    level: SubgraphPath = (),
) -> Value:
    """``node_id`` renamed to ``new_id`` (when given and different), then each of ``fields``
    set in its payload (``None`` removes one). Only that node's payload is copied."""
    if new_id is not None and new_id != node_id:
        value = rename_node(value, node_id, new_id, level=level)
        node_id = new_id

    def change(current: Value) -> Value:
        index = _index(current, node_id)
        node = current["nodes"][index]
        payload = {**node["payload"]}
        for name, field_value in fields.items():
            if name == "id":
                continue
            if field_value is None:
                payload.pop(name, None)
            else:
                payload[name] = copy.deepcopy(field_value)
        nodes = [*current["nodes"]]
        nodes[index] = {**node, "payload": payload}
        return {**current, "nodes": nodes}

    return _at_level(value, level, change)


def add_edge(
    value: Value, source: str, target: str, label: str | None = None, *, level: SubgraphPath = ()
) -> Value:
    """A new edge at the end of the list; the same edge twice is refused (the format allows it,
    and it adds nothing)."""

    def change(current: Value) -> Value:
        ids = _node_ids(current)
        if source not in ids:
            raise EditRefused("from", f"there is no node `{source}`")
        if target not in ids:
            raise EditRefused("to", f"there is no node `{target}`")
        edge: Value = {"from": source, "to": target}
        if label:
            edge["label"] = label
        if edge in current["edges"]:
            case = f" for case `{label}`" if label else ""
            raise EditRefused("to", f"there is already an edge `{source}` → `{target}`{case}")
        return {**current, "edges": [*current["edges"], edge]}

    return _at_level(value, level, change)


def delete_edge(value: Value, index: int, *, level: SubgraphPath = ()) -> Value:
    """Without the edge at ``index`` (the edge list's order)."""

    def change(current: Value) -> Value:
        if not 0 <= index < len(current["edges"]):
            raise EditRefused("edge", f"there is no edge number {index + 1}")
        edges = [*current["edges"]]
        del edges[index]
        return {**current, "edges": edges}

    return _at_level(value, level, change)


def relabel_edge(
    value: Value, index: int, label: str, *, source: str, target: str, level: SubgraphPath = ()
) -> Value:
    """The edge at ``index`` labelled ``label`` (a branch's case), when it still goes from
    ``source`` to ``target``."""
    if not label:
        raise EditRefused("label", "choose the case the edge is for")

    def change(current: Value) -> Value:
        edges = [*current["edges"]]
        if not 0 <= index < len(edges):
            raise EditRefused("edge", f"there is no edge number {index + 1}")
        edge = edges[index]
        if (edge.get("from"), edge.get("to")) != (source, target):
            raise EditRefused(
                "edge", f"edge number {index + 1} no longer goes from `{source}` to `{target}`"
            )
        edges[index] = {**edge, "label": label}
        return {**current, "edges": edges}

    return _at_level(value, level, change)


def choose_over(value: Value, node_id: str, *, level: SubgraphPath = ()) -> Value:
    """A new map's ``over`` read from what flows into it: the one list it describes, when it
    describes exactly one; else the map is left as it is (``items``), and the editor's hint says
    when nothing flowing in has ``items``."""
    try:
        graph = parse_graph(value)
    except MalformedDocument:
        return value
    lists = array_paths(shape_paths(DataFlow(graph).received(level, node_id)))
    if len(lists) != 1:
        return value
    return update_node(value, node_id, {"over": lists[0].reference}, level=level)
