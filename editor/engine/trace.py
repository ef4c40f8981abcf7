"""Where a run has been, node by node and edge by edge, at every level of its graph: what the
run page draws (spec 06, *Runs*). A pure fold of the log, like the status.

Events inside a map item or a fold pass carry a ``scope`` (``[[owner, index], …]``); a scope
names a place in the document: a ``node`` body sits beside its owner (same level), a
``subgraph`` body one level down (:func:`level_of`). Each node is seen once per *instance*
(once at the top, once per item or pass inside a body); its mark sums up its instances:

* ``failed`` — the node the run failed at (``RunFailed.node``), and every map or fold it runs
  inside; a log from before ``RunFailed`` named its node marks every node left open;
* ``waiting`` — an instance parked (a gate, a budget, a write to reconcile) or asleep (a delay);
* ``running`` — an instance entered and not left while the run lives;
* ``stopped`` — entered and never left in a run that ended otherwise (abandoned, or cut off
  beside the failed item);
* ``done``, ``skipped`` — every instance left, or skipped.

An edge is *walked* when, in one instance of its level, its source was left (for a branch,
through the case the edge is labelled with) and its target was reached.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from editor.engine.ports import Envelope
from editor.engine.status import PARKING_KINDS, RESOLUTION_KINDS, scope_key
from editor.graph import BranchNode, FoldNode, Graph, MapNode
from editor.graph.model import Edge, Node, SubgraphBody, SubgraphPath

__all__ = ["Levels", "NodeMark", "RunTrace", "level_of", "levels", "run_trace"]

Scope = tuple[tuple[str, int], ...]

#: When a node's instances disagree, the mark that wins (the first of these present).
PRECEDENCE = ("failed", "waiting", "running", "stopped", "done", "skipped")


@dataclass(frozen=True, slots=True)
class Levels:
    """Every document level of a graph (``()`` for the top, ``(owner, …)`` for subgraph
    bodies), with its nodes by id."""

    graphs: dict[SubgraphPath, Graph]
    nodes: dict[SubgraphPath, dict[str, Node]]
    outbound: dict[SubgraphPath, dict[str, list[Edge]]]

    def node(self, level: SubgraphPath, node_id: str) -> Node | None:
        return self.nodes.get(level, {}).get(node_id)


def levels(graph: Graph) -> Levels:
    graphs: dict[SubgraphPath, Graph] = {}

    def visit(level: SubgraphPath, document: Graph) -> None:
        graphs[level] = document
        for node in document.nodes:
            body = getattr(node, "body", None)
            if isinstance(body, SubgraphBody):
                visit((*level, node.id), body.graph)

    visit((), graph)
    nodes = {level: {node.id: node for node in doc.nodes} for level, doc in graphs.items()}
    outbound: dict[SubgraphPath, dict[str, list[Edge]]] = {}
    for level, document in graphs.items():
        edges = outbound[level] = {}
        for edge in document.edges:
            edges.setdefault(edge.source, []).append(edge)
    return Levels(graphs, nodes, outbound)


def level_of(graph_levels: Levels, scope: Iterable[tuple[str, int]]) -> SubgraphPath | None:
    """The document level whose nodes run in ``scope``; ``None`` when the scope names no
    owner of this graph (a log of another graph)."""
    level: SubgraphPath = ()
    for owner, _index in scope:
        node = graph_levels.node(level, owner)
        if not isinstance(node, (MapNode, FoldNode)):
            return None
        if isinstance(node.body, SubgraphBody):
            level = (*level, owner)
    return level


@dataclass(slots=True)
class _Instance:
    entered: bool = False
    exited: bool = False
    skipped: bool = False
    parked: bool = False
    failed: bool = False
    case: str | None = None


@dataclass(slots=True)
class NodeMark:
    """How a node fared over its instances: its ``state`` (a key of the canvas' run states),
    how many instances it had, and the cases a branch took."""

    state: str
    instances: int = 1
    cases: tuple[str, ...] = ()


@dataclass(slots=True)
class RunTrace:
    """The marks of every node reached, by ``(level, node id)``; the edges walked, as
    ``(level, source, target, label)``; the node the run failed at."""

    marks: dict[tuple[SubgraphPath, str], NodeMark] = field(default_factory=dict)
    walked: set[tuple[SubgraphPath, str, str, str | None]] = field(default_factory=set)
    failed: tuple[SubgraphPath, str] | None = None
    #: Where the run failed: the scope (``((owner, index), …)``) and the node.
    failed_at: tuple[Scope, str] | None = None
    #: The nodes entered at the top of the graph (the points a fork may start from).
    entered: set[str] = field(default_factory=set)


_ENDED = frozenset({"completed", "failed", "abandoned"})


def _state(instance: _Instance, run_state: str, named_failure: bool) -> str:
    if instance.failed:
        return "failed"
    if instance.parked and run_state not in _ENDED:
        return "waiting"
    if instance.exited:
        return "done"
    if instance.skipped:
        return "skipped"
    if run_state == "failed":
        return "stopped" if named_failure else "failed"
    if run_state in _ENDED:
        return "stopped"
    return "running"


def _fold(events: Iterable[Envelope]) -> tuple[dict[tuple[Scope, str], _Instance], Any]:
    instances: dict[tuple[Scope, str], _Instance] = {}
    failure: Any = None
    for envelope in events:
        kind, payload = envelope.kind, envelope.payload
        if kind == "RunFailed":
            failure = payload
            continue
        if "node" not in payload:
            continue
        key = (scope_key(payload.get("scope")), str(payload["node"]))
        instance = instances.get(key)
        if instance is None:
            instance = instances[key] = _Instance()
        if kind == "NodeEntered":
            instance.entered = True
        elif kind == "NodeExited":
            instance.exited = True
        elif kind == "NodeSkipped":
            instance.skipped = True
        elif kind == "BranchTaken":
            instance.case = payload.get("case")
        elif kind in PARKING_KINDS or kind == "SleepStarted":
            instance.parked = True  # a delay's wait is drawn as waiting too
        elif kind in RESOLUTION_KINDS or kind == "SleepCompleted":
            instance.parked = False
    return instances, failure


def _failed_chain(failure: Any) -> Iterator[tuple[Scope, str]]:
    """The instance a run failed at, then each map or fold instance it ran inside."""
    if not isinstance(failure, dict) or not isinstance(failure.get("node"), str):
        return
    try:
        scope = scope_key(failure.get("scope"))
    except (TypeError, ValueError):
        return
    yield scope, failure["node"]
    for depth in range(len(scope) - 1, -1, -1):
        yield scope[:depth], scope[depth][0]


def run_trace(graph: Graph | Levels, events: Iterable[Envelope], run_state: str) -> RunTrace:
    """The trace of a run of ``graph`` (or of its :func:`levels`) in ``run_state`` from its
    log (or from envelopes whose payloads keep only ``node``, ``scope``, ``case``, and
    ``RunFailed``'s fields)."""
    instances, failure = _fold(events)
    chain = list(_failed_chain(failure)) if run_state == "failed" else []
    for key in chain:
        instances.setdefault(key, _Instance()).failed = True
    graph_levels = graph if isinstance(graph, Levels) else levels(graph)
    trace = RunTrace()
    gathered: dict[tuple[SubgraphPath, str], list[str]] = {}
    cases: dict[tuple[SubgraphPath, str], set[str]] = {}
    by_scope: dict[Scope, dict[str, _Instance]] = {}
    for (scope, node), instance in instances.items():
        level = level_of(graph_levels, scope)
        if level is None or graph_levels.node(level, node) is None:
            continue
        state = _state(instance, run_state, bool(chain))
        gathered.setdefault((level, node), []).append(state)
        if instance.case is not None:
            cases.setdefault((level, node), set()).add(instance.case)
        by_scope.setdefault(scope, {})[node] = instance
    for marked, states in gathered.items():
        state = next(mark for mark in PRECEDENCE if mark in states)
        trace.marks[marked] = NodeMark(state, len(states), tuple(sorted(cases.get(marked, ()))))
    if chain:
        scope, node = trace.failed_at = chain[0]
        level = level_of(graph_levels, scope)
        if level is not None:
            trace.failed = (level, node)
    trace.entered = {node for node, instance in by_scope.get((), {}).items() if instance.entered}
    for scope, reached in by_scope.items():
        level = level_of(graph_levels, scope)
        assert level is not None  # kept above only when it has one
        outbound = graph_levels.outbound[level]
        for node in reached:
            for edge in outbound.get(node, ()):
                if _walked(graph_levels, level, edge, reached):
                    trace.walked.add((level, edge.source, edge.target, edge.label))
    return trace


def _walked(
    graph_levels: Levels, level: SubgraphPath, edge: Edge, reached: dict[str, _Instance]
) -> bool:
    source, target = reached.get(edge.source), reached.get(edge.target)
    if source is None or target is None or not source.exited or source.skipped:
        return False
    if not (target.entered or target.failed):
        return False
    if isinstance(graph_levels.node(level, edge.source), BranchNode):
        return edge.label == source.case
    return True
