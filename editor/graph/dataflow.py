"""What flows into each node of a document and what each node gives, read from the schemas the
document declares, and the paths a schema (or a value) describes.

The editor shows these beside a node's form (*Receives*, *Gives*), offers the paths in every
reference field, and hints where a reference reads a path that nothing flowing in describes
(:mod:`editor.graph.hints`). Nothing here is part of the verdict: a document's errors and hash
never depend on it.

The flow follows the walk of spec 04: an entry node receives the run's input (a subgraph's
entry nodes, the map's item or the fold's pass); any other node the output of an upstream node
along an edge. What a node gives: an agent's or a tool's declared ``output_schema``; a gate's
``approval_schema`` (the approver's input is its output); a branch and a delay pass on what they
received; a map its declared ``output_schema``, else an array of its body's outputs; a fold its
join's (the last or best pass, or an array of every pass).

A value's description is a :data:`Shape`: the schemas it may have (one per way in, so a node
reached along two edges may have either), or ``None`` when some way in is described by nothing
(an agent without an ``output_schema``, say). Nothing unknown is ever guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from editor.graph.errors import ExpressionError
from editor.graph.expressions import parse_reference
from editor.graph.jsonio import canonical_json
from editor.graph.model import (
    AgentNode,
    BranchNode,
    DelayNode,
    FoldNode,
    GateNode,
    Graph,
    JoinAll,
    MapNode,
    Node,
    NodeBody,
    SubgraphBody,
    SubgraphPath,
    ToolNode,
)
from editor.graph.validation.fold_shapes import schema_at

__all__ = [
    "MAX_PATHS",
    "MAX_PATH_DEPTH",
    "DataFlow",
    "DescribedPath",
    "Inflow",
    "Shape",
    "array_paths",
    "combined",
    "graph_at",
    "shape_at",
    "shape_paths",
    "value_paths",
]

#: The schemas a value may have (one per way it may arrive), or ``None``: not described.
Shape = tuple[Any, ...] | None

#: How deep and how many paths a listing goes: a picker of a few dozen paths reads; a
#: thousand would not, and a recursive schema has no end.
MAX_PATH_DEPTH = 4
MAX_PATHS = 60
#: Levels of subgraph nesting the flow follows (spec 02's cap).
MAX_NESTING = 8

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset({"true", "false", "null"})
_COMPOSED = ("anyOf", "oneOf", "allOf")


@dataclass(frozen=True, slots=True)
class Inflow:
    """One way a value reaches a node.

    ``origin``: ``"input"`` (the run's input, at the top), ``"edge"`` (the output of ``source``
    along an edge), ``"item"`` (one item of map ``source``'s ``over``), ``"pass"`` (what fold
    ``source`` received, its first pass), ``"previous"`` (the previous pass's output, for a
    fold's later passes: ``source`` is the fold)."""

    origin: str
    source: str | None
    shape: Shape


@dataclass(frozen=True, slots=True)
class DescribedPath:
    """A path a schema or a value describes: the ``reference`` to type (``items.0.score``)
    and what is there in words (``number``, ``array``, ``""`` when not said)."""

    reference: str
    type: str
    title: str = ""


def combined(shapes: Iterable[Shape]) -> Shape:
    """One shape of several ways in: any of their schemas, or ``None`` when one is unknown."""
    listed = list(shapes)
    if len(listed) == 1:
        return listed[0] or None  # one way in: its schemas as they are (the common case)
    alternatives: list[Any] = []
    seen: set[bytes] = set()
    for shape in listed:
        if shape is None:
            return None
        for schema in shape:
            key = _canonical(schema)
            if key not in seen:
                seen.add(key)
                alternatives.append(schema)
    return tuple(alternatives) if alternatives else None


def _canonical(schema: Any) -> bytes:
    try:
        return canonical_json(schema)
    except (TypeError, ValueError):
        return repr(schema).encode("utf-8", "surrogatepass")


def _one(shape: tuple[Any, ...]) -> Any:
    return shape[0] if len(shape) == 1 else {"anyOf": list(shape)}


def shape_at(shape: Shape, segments: tuple[str | int, ...]) -> tuple[bool | None, Shape]:
    """Walk each schema of ``shape`` along ``segments`` (spec 08's walk): ``(False, None)``
    when every schema positively refuses the path; ``(True, the schemas there)`` when every
    schema that does not refuse it describes it to its end; ``(None, None)`` otherwise
    (unknown, or a step the walk does not judge)."""
    if shape is None:
        return None, None
    found: list[Any] = []
    refused = 0
    for schema in shape:
        outcome, there = schema_at(schema, segments)
        if outcome is None:
            return None, None
        if outcome:
            found.append(there)
        else:
            refused += 1
    if refused == len(shape):
        return False, None
    return True, tuple(found)


# --- Paths --------------------------------------------------------------------------------------


def _types(schema: Any) -> list[str]:
    """The JSON types a schema says (``[]``: it does not say)."""
    if type(schema) is not dict:
        return []
    declared = schema.get("type")
    if type(declared) is str:
        return [declared]
    if type(declared) is list:
        return [item for item in declared if type(item) is str]
    if type(schema.get("properties")) is dict:
        return ["object"]
    if "items" in schema:
        return ["array"]
    found: list[str] = []
    for keyword in _COMPOSED:
        parts = schema.get(keyword)
        if type(parts) is list:
            for part in parts:
                found += [kind for kind in _types(part) if kind not in found]
    return found


def _branches(schema: Any) -> list[Any]:
    """``schema`` and, for ``anyOf``/``oneOf``/``allOf``, each of its parts (one level)."""
    found = [schema]
    if type(schema) is dict:
        for keyword in _COMPOSED:
            parts = schema.get(keyword)
            if type(parts) is list:
                found += parts
    return found


def _children(schema: Any) -> Iterator[tuple[str | int, Any]]:
    """The steps a schema describes: each property a path can name, and item 0 of an array."""
    for branch in _branches(schema):
        if type(branch) is not dict:
            continue
        properties = branch.get("properties")
        if type(properties) is dict:
            for key, inner in properties.items():
                if _IDENTIFIER.fullmatch(key) and key not in _KEYWORDS:
                    yield key, inner
        items = branch.get("items")
        if type(items) is dict:
            yield 0, items
        elif type(items) is list and items:
            yield 0, items[0]
        prefix = branch.get("prefixItems")
        if type(prefix) is list and prefix:
            yield 0, prefix[0]


def _title(schema: Any) -> str:
    if type(schema) is not dict:
        return ""
    for key in ("title", "description"):
        text = schema.get(key)
        if type(text) is str and text.strip():
            words = " ".join(text.split())
            return words if len(words) <= 60 else words[:59] + "…"
    return ""


def _listing(
    roots: Iterable[tuple[str | int, Any]],
    children: Any,
    describe: Any,
    *,
    max_depth: int,
    max_paths: int,
) -> list[DescribedPath]:
    """Breadth first (so the top's keys come first when the listing is cut), listed depth
    first in the order they are declared."""
    found: dict[str, tuple[tuple[int, ...], list[str], str]] = {}
    layer: list[tuple[tuple[str | int, ...], tuple[int, ...], Any]] = []
    for index, (segment, inner) in enumerate(roots):
        if isinstance(segment, str):
            layer.append(((segment,), (index,), inner))
    depth = 1
    while layer and len(found) < max_paths:
        following: list[tuple[tuple[str | int, ...], tuple[int, ...], Any]] = []
        for segments, order, inner in layer:
            reference = ".".join(str(segment) for segment in segments)
            kinds, title = describe(inner)
            if reference in found:
                known = found[reference]
                found[reference] = (
                    known[0],
                    known[1] + [k for k in kinds if k not in known[1]],
                    known[2] or title,
                )
            elif len(found) < max_paths:
                found[reference] = (order, list(kinds), title)
            else:
                break
            if depth < max_depth:
                for index, (segment, deeper) in enumerate(children(inner)):
                    following.append(((*segments, segment), (*order, index), deeper))
        layer = following
        depth += 1
    listed = sorted(found.items(), key=lambda item: item[1][0])
    return [
        DescribedPath(reference, " or ".join(kinds), title)
        for reference, (_order, kinds, title) in listed
    ]


def shape_paths(
    shape: Shape, *, max_depth: int = MAX_PATH_DEPTH, max_paths: int = MAX_PATHS
) -> list[DescribedPath]:
    """The paths the schemas of ``shape`` describe (``a``, ``a.b``, ``items``, ``items.0``,
    ``items.0.score``), at most ``max_paths`` of them, at most ``max_depth`` segments long."""
    if not shape:
        return []
    roots = [step for schema in shape for step in _children(schema)]
    return _listing(
        roots,
        _children,
        lambda schema: (_types(schema), _title(schema)),
        max_depth=max_depth,
        max_paths=max_paths,
    )


def _value_children(value: Any) -> Iterator[tuple[str | int, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and _IDENTIFIER.fullmatch(key) and key not in _KEYWORDS:
                yield key, inner
    elif isinstance(value, list) and value:
        yield 0, value[0]


def _value_type(value: Any) -> list[str]:
    if value is None:
        return ["null"]
    if isinstance(value, bool):
        return ["boolean"]
    if isinstance(value, int):
        return ["integer"]
    if isinstance(value, float):
        return ["number"]
    if isinstance(value, str):
        return ["string"]
    return ["array"] if isinstance(value, list) else ["object"]


def value_paths(
    value: Any, *, max_depth: int = MAX_PATH_DEPTH, max_paths: int = MAX_PATHS
) -> list[DescribedPath]:
    """The paths an actual value has (its first item standing for every item of a list)."""
    return _listing(
        _value_children(value),
        _value_children,
        lambda inner: (_value_type(inner), ""),
        max_depth=max_depth,
        max_paths=max_paths,
    )


def array_paths(paths: Iterable[DescribedPath]) -> list[DescribedPath]:
    """The paths of ``paths`` that are described as arrays."""
    return [path for path in paths if "array" in path.type.split(" or ")]


# --- The flow -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Level:
    graph: Graph
    by_id: dict[str, Node]
    bodies: frozenset[str]
    inbound: dict[str, tuple[str, ...]]
    terminals: tuple[str, ...]
    #: The walked nodes in an order where each comes after every node with an edge to it
    #: (those on a cycle last, in document order).
    order: tuple[str, ...]
    #: Each body node's owner: the last map or fold naming it.
    owners: dict[str, MapNode | FoldNode]


class DataFlow:
    """What flows into and out of each node of ``graph``: each level is worked out once, when
    first asked about, node after node in the walk's order (no recursion along the edges, so a
    chain of any length costs what its nodes do)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._levels: dict[SubgraphPath, _Level | None] = {}
        self._done: set[SubgraphPath] = set()
        self._gives: dict[tuple[SubgraphPath, str], Shape] = {}
        self._receives: dict[tuple[SubgraphPath, str], tuple[Inflow, ...]] = {}
        self._run_input: Shape = None
        self._run_input_read = False

    # the levels ------------------------------------------------------------------------

    def level(self, level: SubgraphPath) -> _Level | None:
        """The document level ``level`` names, or ``None`` when there is none."""
        if level in self._levels:
            return self._levels[level]
        found: _Level | None = None
        if not level:
            found = _prepare(self.graph)
        elif len(level) < MAX_NESTING:
            parent = self.level(level[:-1])
            owner = parent.by_id.get(level[-1]) if parent is not None else None
            body = getattr(owner, "body", None)
            if isinstance(body, SubgraphBody):
                found = _prepare(body.graph)
        self._levels[level] = found
        return found

    def node(self, level: SubgraphPath, node_id: str) -> Node | None:
        """The last node with ``node_id`` at ``level`` (as validation looks nodes up)."""
        current = self.level(level)
        return current.by_id.get(node_id) if current is not None else None

    def levels(self) -> Iterator[tuple[SubgraphPath, Graph]]:
        """Every level, the top first, then each subgraph body depth first in document order."""
        pending: list[SubgraphPath] = [()]
        while pending:
            level = pending.pop()
            current = self.level(level)
            if current is None:
                continue
            yield level, current.graph
            inner = [
                (*level, node.id)
                for node in current.graph.nodes
                if isinstance(getattr(node, "body", None), SubgraphBody)
            ]
            pending.extend(reversed(inner))

    # what flows ------------------------------------------------------------------------

    def receives(self, level: SubgraphPath, node_id: str) -> tuple[Inflow, ...]:
        """Each way a value reaches ``node_id`` (empty when it is not a node of ``level``)."""
        self._work_out(level)
        return self._receives.get((level, node_id), ())

    def received(self, level: SubgraphPath, node_id: str) -> Shape:
        """What ``node_id`` receives, all ways in together."""
        inflows = self.receives(level, node_id)
        return combined(inflow.shape for inflow in inflows) if inflows else None

    def gives(self, level: SubgraphPath, node_id: str) -> Shape:
        """What ``node_id`` gives (``None``: nothing describes it)."""
        self._work_out(level)
        return self._gives.get((level, node_id))

    def body_output(self, level: SubgraphPath, owner: MapNode | FoldNode) -> Shape:
        """What one run of a map's or a fold's body gives: its body node's output, or its
        subgraph's (the output of the node that runs last: one of its terminal nodes)."""
        body = owner.body
        if isinstance(body, NodeBody):
            return self.gives(level, body.node) if self.node(level, body.node) else None
        inner = (*level, owner.id)
        current = self.level(inner)
        if current is None or not current.terminals:
            return None
        return combined(self.gives(inner, terminal) for terminal in current.terminals)

    def run_input(self) -> Shape:
        """The schema of the run's input: what the top-level entry nodes that check the value
        they receive (agents, and tools without an input mapping) declare, when they agree."""
        if self._run_input_read:
            return self._run_input
        top = self.level(())
        declared: list[Any] = []
        if top is not None:
            for node in top.graph.nodes:
                if node.id in top.bodies or top.inbound.get(node.id):
                    continue
                schema = _declared_input(node)
                if schema is not None:
                    declared.append(schema)
        agreed: Shape = None
        if declared and all(_canonical(schema) == _canonical(declared[0]) for schema in declared):
            agreed = (declared[0],)
        self._run_input, self._run_input_read = agreed, True
        return agreed

    # how ------------------------------------------------------------------------------------

    def _work_out(self, level: SubgraphPath) -> None:
        """Every node's inflows and output at ``level``, once (its owner's level first)."""
        if level in self._done:
            return
        if level:
            self._work_out(level[:-1])  # which may work this level out, for its owner's output
            if level in self._done:
                return
        self._done.add(level)
        current = self.level(level)
        if current is None:
            return
        owner = self.node(level[:-1], level[-1]) if level else None
        if isinstance(owner, FoldNode):
            # A pass's input is the fold's, then the previous pass's output: what the subgraph
            # gives when its first pass is all that is known.
            self._walk(level, current, self._entry_inflows(level, None))
            previous = self.body_output(level[:-1], owner)
            if previous is not None:
                self._walk(level, current, self._entry_inflows(level, previous))
        else:
            self._walk(level, current, self._entry_inflows(level, None))

    def _entry_inflows(self, level: SubgraphPath, previous: Shape) -> tuple[Inflow, ...] | None:
        """What a subgraph's entry nodes receive (``None`` at the top: the run's input)."""
        if not level:
            return None
        owner_level, owner_id = level[:-1], level[-1]
        owner = self.node(owner_level, owner_id)
        if isinstance(owner, MapNode):
            return (Inflow("item", owner_id, self._item(owner_level, owner)),)
        if isinstance(owner, FoldNode):
            first = Inflow("pass", owner_id, self.received(owner_level, owner_id))
            if previous is None:
                return (first,)
            return (first, Inflow("previous", owner_id, previous))
        return ()

    def _walk(self, level: SubgraphPath, current: _Level, entry: tuple[Inflow, ...] | None) -> None:
        # The nodes whose output does not depend on what they receive come first: a map's or a
        # fold's node body may be any of them.
        for node in current.by_id.values():
            if not isinstance(node, (BranchNode, DelayNode, MapNode, FoldNode)):
                self._gives[(level, node.id)] = self._output(level, node)
        for node_id in current.order:
            node = current.by_id[node_id]
            sources = current.inbound.get(node_id, ())
            if sources:
                inflows = tuple(
                    Inflow("edge", source, self._gives.get((level, source))) for source in sources
                )
            elif entry is not None:
                inflows = entry
            else:
                own = _declared_input(node)
                inflows = (Inflow("input", None, (own,) if own is not None else self.run_input()),)
            self._receives[(level, node_id)] = inflows
            self._gives[(level, node_id)] = self._output(level, node)
        for node_id in current.bodies:
            self._receives[(level, node_id)] = self._body_inflows(level, current, node_id)

    def _body_inflows(
        self, level: SubgraphPath, current: _Level, node_id: str
    ) -> tuple[Inflow, ...]:
        """A body node receives its owner's item (map) or pass (fold): the owner is the last
        map or fold naming it."""
        owner = current.owners.get(node_id)
        if isinstance(owner, MapNode):
            return (Inflow("item", owner.id, self._item(level, owner)),)
        if isinstance(owner, FoldNode):
            return (
                Inflow("pass", owner.id, self.received(level, owner.id)),
                Inflow("previous", owner.id, self._gives.get((level, node_id))),
            )
        return ()

    def _item(self, level: SubgraphPath, owner: MapNode) -> Shape:
        """One item of the list a map's ``over`` reads."""
        segments = _reference_segments(owner.over)
        if segments is None:
            return None
        inflows = self._receives.get((level, owner.id), ())
        received = combined(inflow.shape for inflow in inflows) if inflows else None
        outcome, there = shape_at(received, segments)
        if not outcome or there is None:
            return None
        items: list[Any] = []
        for schema in there:
            if type(schema) is not dict:
                return None
            inner = schema.get("items")
            if type(inner) is not dict:
                return None
            items.append(inner)
        return combined([tuple(items)])

    def _output(self, level: SubgraphPath, node: Node) -> Shape:
        if isinstance(node, (AgentNode, ToolNode)):
            return (node.output_schema,) if node.output_schema is not None else None
        if isinstance(node, GateNode):
            schema = node.approval_schema
            return (schema,) if isinstance(schema, dict) else None
        if isinstance(node, (BranchNode, DelayNode)):
            inflows = self._receives.get((level, node.id), ())
            return combined(inflow.shape for inflow in inflows) if inflows else None
        if isinstance(node, MapNode):
            if node.output_schema is not None:
                return (node.output_schema,)
            body = self.body_output(level, node)
            return ({"type": "array", "items": _one(body)} if body else {"type": "array"},)
        if isinstance(node, FoldNode):
            passes = self.body_output(level, node)
            if isinstance(node.join, JoinAll):
                return ({"type": "array", "items": _one(passes)} if passes else {"type": "array"},)
            return passes  # the last pass, or the best one (``best_by``): one pass's output
        return None


def graph_at(graph: Graph, level: SubgraphPath) -> Graph | None:
    """The document level ``level`` of ``graph`` (the last node with each owner's id, as
    validation looks nodes up), or ``None`` when there is none."""
    current: Graph | None = graph
    for owner_id in level:
        owner = None
        for node in current.nodes if current is not None else ():
            if node.id == owner_id:
                owner = node
        body = getattr(owner, "body", None)
        current = body.graph if isinstance(body, SubgraphBody) else None
    return current


def _declared_input(node: Node) -> Any:
    """The schema a node checks the value it receives against, if it declares one."""
    if isinstance(node, AgentNode):
        return node.input_schema
    if isinstance(node, ToolNode) and not node.input:
        return node.input_schema
    return None


def _reference_segments(text: str | None) -> tuple[str | int, ...] | None:
    if text is None:
        return None
    try:
        return parse_reference(text).segments
    except ExpressionError:
        return None


def _prepare(graph: Graph) -> _Level:
    by_id = {node.id: node for node in graph.nodes}
    owners: dict[str, MapNode | FoldNode] = {
        node.body.node: node
        for node in graph.nodes
        if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
    }
    bodies = frozenset(owners)
    inbound: dict[str, list[str]] = {}
    outbound: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.source in by_id and edge.target in by_id:
            if edge.source in bodies or edge.target in bodies:
                continue  # the walk never follows them (E7 refuses them)
            sources = inbound.setdefault(edge.target, [])
            if edge.source not in sources:
                sources.append(edge.source)
                outbound.setdefault(edge.source, []).append(edge.target)
    walked = [node_id for node_id in by_id if node_id not in bodies]
    waiting = {node_id: len(inbound.get(node_id, ())) for node_id in walked}
    ready = [node_id for node_id in walked if not waiting[node_id]]
    order: list[str] = []
    while ready:
        node_id = ready.pop()
        order.append(node_id)
        for target in outbound.get(node_id, ()):
            waiting[target] -= 1
            if not waiting[target]:
                ready.append(target)
    placed = set(order)
    order += [node_id for node_id in walked if node_id not in placed]  # on a cycle
    terminals = tuple(node_id for node_id in walked if node_id not in outbound)
    return _Level(
        graph,
        by_id,
        bodies,
        {target: tuple(sources) for target, sources in inbound.items()},
        terminals,
        tuple(order),
        owners,
    )
