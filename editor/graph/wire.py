"""Writing graphs: the wire form, the canonical form and the graph hash (spec 01).

The wire form is compact JSON with payload fields in the order of
:data:`~editor.graph.model.PAYLOAD_FIELDS`, unset optionals and an empty tool
``input`` omitted, ``edges`` always present, and free JSON values (schemas, the
tool ``input`` map) written with sorted keys. The canonical form sorts every
object's keys; its SHA-256 is the graph hash, which is also a frozen version's id.
"""

from __future__ import annotations

from typing import Any, NewType

import orjson

from editor.graph.jsonio import canonical_json, hash_value, write_json
from editor.graph.model import (
    PAYLOAD_FIELDS,
    BestBy,
    ExpressionCondition,
    Graph,
    NodeBody,
)

__all__ = [
    "GraphHash",
    "canonical_graph",
    "document_of",
    "graph_hash",
    "wire_json",
    "wire_value",
]

#: A graph's id: ``sha256:`` and the 64 lowercase hex digits of its canonical form's SHA-256
#: (:func:`graph_hash`). Frozen versions, runs and the ``/g/<hex>/`` pages name graphs by it;
#: the pages' URL converter hands their views one (``editor.urls``).
GraphHash = NewType("GraphHash", str)


def _sorted_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


def _condition(when: Any) -> dict[str, Any]:
    if isinstance(when, ExpressionCondition):
        return {"kind": "expression", "value": when.expression}
    return {"kind": "model_decision"}


def _body(body: Any, graph_value: Any) -> dict[str, Any]:
    if isinstance(body, NodeBody):
        return {"kind": "node", "value": body.node}
    return {"kind": "subgraph", "value": graph_value(body.graph)}


def _join(join: Any) -> dict[str, Any]:
    if isinstance(join, BestBy):
        return {"kind": "best_by", "value": join.reference}
    return {"kind": join.kind}


def _graph_value(graph: Graph, *, ordered: bool) -> dict[str, Any]:
    def recurse(inner: Graph) -> dict[str, Any]:
        return _graph_value(inner, ordered=ordered)

    free = _sorted_json if ordered else (lambda value: value)
    nodes = []
    for node in graph.nodes:
        payload: dict[str, Any] = {}
        for spec in PAYLOAD_FIELDS[node.kind]:
            value = getattr(node, spec.name)
            if spec.type == "json":
                if value is not None or spec.required:
                    payload[spec.name] = free(value)
            elif spec.type == "string_map":
                if value:
                    payload[spec.name] = free(value)
            elif spec.type == "cases":
                payload[spec.name] = [
                    {"name": case.name, "when": _condition(case.when)} for case in value
                ]
            elif spec.type == "body":
                payload[spec.name] = _body(value, recurse)
            elif spec.type == "join":
                payload[spec.name] = _join(value)
            elif value is not None:
                payload[spec.name] = value
        nodes.append({"kind": node.kind, "payload": payload})
    edges = []
    for edge in graph.edges:
        item = {"from": edge.source, "to": edge.target}
        if edge.label is not None:
            item["label"] = edge.label
        edges.append(item)
    return {"schema_version": graph.schema_version, "nodes": nodes, "edges": edges}


def document_of(graph: Graph) -> dict[str, Any]:
    """The graph as plain JSON values (normalised, key order unspecified)."""
    document: dict[str, Any] | None = graph._document
    if document is None:
        document = _graph_value(graph, ordered=False)
        object.__setattr__(graph, "_document", document)
    return document


def wire_value(graph: Graph) -> dict[str, Any]:
    """The graph as plain JSON values, keys in wire order."""
    return _graph_value(graph, ordered=True)


def wire_json(graph: Graph) -> str:
    """The wire form: compact JSON, fields in spec order (spec 01, *Two serializations*)."""
    value = wire_value(graph)
    try:
        return orjson.dumps(value).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):
        return write_json(value, sort_keys=False)


def canonical_graph(graph: Graph) -> bytes:
    """The canonical bytes of a graph: what a frozen version's export contains."""
    return canonical_json(document_of(graph))


def graph_hash(graph: Graph) -> GraphHash:
    """``sha256:<hex>`` of the canonical form of the parsed-and-rewritten document."""
    return GraphHash(hash_value(document_of(graph)))
