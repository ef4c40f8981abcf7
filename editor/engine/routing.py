"""What each instance of a node received, read back from the log (spec 04, *Walk*; the run
page's node detail): the engine records outputs, not inputs, so the value a node was routed is
found the way the walk found it.

* a node with live inbound edges got the output of the live source with the smallest id, in
  the same map item or fold pass;
* an entry node at the top got the run input; the entry node of a body got its item (a map:
  the element of its ``over`` list; a fold: the fold's own input for pass 0, and the output of
  the previous pass after that).

:func:`routed_inputs` answers for every instance of one node: its scope → the value, or
:data:`~editor.graph.MISSING` when the log does not hold what it was made of.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from editor.engine.ports import Envelope
from editor.engine.status import scope_key
from editor.engine.trace import Levels, level_of
from editor.graph import MISSING, BranchNode, FoldNode, MapNode, parse_reference
from editor.graph.model import Edge, NodeBody, SubgraphBody, SubgraphPath

__all__ = ["Routing", "routed_inputs"]

Scope = tuple[tuple[str, int], ...]


class Routing:
    """The outputs, skips and branch cases of a log, and the walk's routing over them."""

    def __init__(self, graph_levels: Levels, run_input: Any, events: Iterable[Envelope]) -> None:
        self.levels = graph_levels
        self.run_input = run_input
        self.outputs: dict[tuple[Scope, str], Any] = {}
        self.skipped: set[tuple[Scope, str]] = set()
        self.cases: dict[tuple[Scope, str], Any] = {}
        for envelope in events:
            payload = envelope.payload
            if "node" not in payload:
                continue
            key = (scope_key(payload.get("scope")), str(payload["node"]))
            if envelope.kind == "NodeExited":
                self.outputs[key] = payload.get("output")
            elif envelope.kind == "NodeSkipped":
                self.skipped.add(key)
            elif envelope.kind == "BranchTaken":
                self.cases[key] = payload.get("case")
        self._bodies = {
            level: {
                node.body.node
                for node in document.nodes
                if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
            }
            for level, document in graph_levels.graphs.items()
        }
        self._memo: dict[tuple[Scope, str], Any] = {}

    def routed(self, scope: Scope, node: str, depth: int = 0) -> Any:
        """The value the instance of ``node`` in ``scope`` received, or ``MISSING``."""
        key = (scope, node)
        if key not in self._memo:
            self._memo[key] = self._routed(scope, node, depth)
        return self._memo[key]

    def _routed(self, scope: Scope, node: str, depth: int) -> Any:
        if depth > 64:  # deeper than any graph nests bodies
            return MISSING
        level = level_of(self.levels, scope)
        if level is None:
            return MISSING
        bodies = self._bodies.get(level, set())
        inbound = [
            edge
            for edge in self.levels.graphs[level].edges
            if edge.target == node and edge.source not in bodies and node not in bodies
        ]
        if inbound:
            live = [edge.source for edge in inbound if self._live(scope, level, edge)]
            return self.outputs[(scope, min(live))] if live else MISSING
        if not scope:
            return self.run_input
        outer, (owner_id, index) = scope[:-1], scope[-1]
        owner_level = level_of(self.levels, outer)
        owner = self.levels.node(owner_level, owner_id) if owner_level is not None else None
        owner_input = self.routed(outer, owner_id, depth + 1)
        if owner_input is MISSING:
            return MISSING
        if isinstance(owner, MapNode):
            items = parse_reference(owner.over).resolve(owner_input)
            if isinstance(items, list) and 0 <= index < len(items):
                return items[index]
            return MISSING
        if isinstance(owner, FoldNode):
            if index == 0:
                return owner_input
            return self._pass_output(owner, (*outer, (owner_id, index - 1)), owner_level)
        return MISSING

    def _live(self, scope: Scope, level: SubgraphPath, edge: Edge) -> bool:
        source = (scope, edge.source)
        if source in self.skipped or source not in self.outputs:
            return False
        if isinstance(self.levels.node(level, edge.source), BranchNode):
            return edge.label == self.cases.get(source)
        return True

    def _pass_output(self, fold: FoldNode, scope: Scope, level: SubgraphPath | None) -> Any:
        """What one pass of ``fold`` gave (the next pass's input)."""
        body = fold.body
        if isinstance(body, NodeBody):
            return self.outputs.get((scope, body.node), MISSING)
        assert isinstance(body, SubgraphBody) and level is not None
        inner = (*level, fold.id)
        document = self.levels.graphs.get(inner)
        if document is None:
            return MISSING
        bodies = self._bodies.get(inner, set())
        sources = {edge.source for edge in document.edges if edge.target not in bodies}
        terminals = [
            node.id for node in document.nodes if node.id not in sources and node.id not in bodies
        ]
        # The run-output rule (spec 04): one terminal → its output, else an object of those
        # that ran.
        if len(terminals) == 1:
            return self.outputs.get((scope, terminals[0]))
        return {
            node: self.outputs[(scope, node)] for node in terminals if (scope, node) in self.outputs
        }


def routed_inputs(
    graph_levels: Levels,
    run_input: Any,
    events: Iterable[Envelope],
    scopes: Iterable[Scope],
    node: str,
) -> dict[Scope, Any]:
    """For each scope in ``scopes``, what the instance of ``node`` there received."""
    routing = Routing(graph_levels, run_input, events)
    return {scope: routing.routed(scope, node) for scope in scopes}
