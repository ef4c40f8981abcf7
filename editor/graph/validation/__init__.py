"""Collect-all validation of a parsed graph (spec 02).

The reference's checks 1–11 of its 0.10 format run first (spec 08: the branch
case edges, once our E1–E3, are its check 7; the fold reference shapes its check 9),
in the reference's order and loop order, with its exact codes, extra keys and
messages; then our extensions E4–E7, E9,
E10 (schemas that could not be evaluated in a closed world) and E11 (node ids
over 256 characters); then, per E8, every embedded subgraph is validated the
same way, depth-first in document order, its errors carrying the owner chain.
E0 runs before everything and, when the document is over the size caps, is the
only error. Errors are plain dicts whose keys come in the order the API returns
them.

:mod:`.level` holds the checks of one document level; :mod:`.schemas` the
memoised JSON Schema checks of E6 and E10.
"""

from __future__ import annotations

from typing import Any

from editor.graph.errors import ErrorData
from editor.graph.model import Graph, SubgraphBody, SubgraphPath, graph_size
from editor.graph.validation.level import (
    MAX_ID_LENGTH,
    MAX_NAME_LENGTH,
    Level,
    is_well_formed_agent_hash,
)
from editor.graph.validation.schemas import SchemaBudget, schema_problem

__all__ = [
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "MAX_ID_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_NESTING",
    "is_well_formed_agent_hash",
    "schema_problem",
    "summarize",
    "validate",
]

DEFAULT_MAX_NODES = 10_000
DEFAULT_MAX_EDGES = 50_000
#: Levels of subgraph nesting, the top document being level 1 (seed 001's cap).
MAX_NESTING = 8


def summarize(graph: Graph) -> dict[str, Any]:
    """The summary of a valid graph: counts, entry and terminal nodes (top level only)."""
    inbound = {edge.target for edge in graph.edges}
    outbound = {edge.source for edge in graph.edges}
    ids = {node.id for node in graph.nodes}
    return {
        "node_count": len(graph.nodes),
        "edge_count": len(graph.edges),
        "entry_nodes": sorted(ids - inbound),
        "terminal_nodes": sorted(ids - outbound),
    }


def validate(
    graph: Graph,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> list[ErrorData]:
    """Every problem of ``graph``, in spec order; an empty list when it is valid."""
    nodes, edges = graph_size(graph)
    if nodes > max_nodes or edges > max_edges:
        return [
            {
                "code": "document_too_large",
                "message": (
                    f"the document has {nodes} nodes and {edges} edges; "
                    f"the limits are {max_nodes} and {max_edges}"
                ),
                "nodes": nodes,
                "edges": edges,
                "max_nodes": max_nodes,
                "max_edges": max_edges,
            }
        ]
    errors: list[ErrorData] = []
    _validate_level(graph, (), errors, SchemaBudget())
    return errors


def _validate_level(
    graph: Graph, owners: SubgraphPath, errors: list[ErrorData], budget: SchemaBudget
) -> None:
    level = Level(graph, owners, budget)
    level.run()
    errors.extend(level.errors)
    for node in graph.nodes:
        body = getattr(node, "body", None)
        if not isinstance(body, SubgraphBody):
            continue
        if len(owners) + 2 > MAX_NESTING:
            errors.append(
                level.error(
                    "nesting_too_deep",
                    f"node `{node.id}`: subgraphs nest deeper than {MAX_NESTING} levels",
                    node=node.id,
                    max=MAX_NESTING,
                )
            )
        else:
            _validate_level(body.graph, (*owners, node.id), errors, budget)


# The checks of one level, in the order their errors are reported. The passes
# below run in whatever order is cheapest and file each error under its check.
