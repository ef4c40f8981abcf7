"""The ``salvor_graph`` v1 document model (spec 01).

A :class:`Graph` holds typed, immutable nodes and edges. The field tables in
:data:`PAYLOAD_FIELDS` are the single declaration of every payload: the strict
parser (:mod:`editor.graph.parsing`), the wire writer (:mod:`editor.graph.wire`)
and the JSON Schema generator (:mod:`editor.graph.schema`) all read them, so the
three cannot drift apart.

The classes are plain slotted dataclasses, not frozen ones: a frozen dataclass
costs four times as much to build, and a 10,000-node document is parsed on every
keystroke. Treat every instance as immutable all the same; nothing in the
project mutates one after it is built.

Free JSON values (schemas) are plain Python values as
:func:`editor.graph.jsonio.read_json` returns them. An optional field that is
unset is ``None``; ``approval_schema`` is required but may be JSON ``null``,
which is also ``None`` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = [
    "BODY_KINDS",
    "CONDITION_KINDS",
    "JOIN_KINDS",
    "KINDS",
    "ON_BOUND_WORDS",
    "PAYLOAD_FIELDS",
    "SCHEMA_VERSION",
    "U32_MAX",
    "U64_MAX",
    "UNIT_VARIANTS",
    "AgentNode",
    "BestBy",
    "BranchCase",
    "BranchNode",
    "DelayNode",
    "Edge",
    "ExpressionCondition",
    "FieldSpec",
    "FoldNode",
    "GateNode",
    "Graph",
    "JoinAll",
    "JoinLast",
    "MapNode",
    "ModelDecision",
    "Node",
    "NodeBody",
    "SubgraphBody",
    "SubgraphPath",
    "ToolNode",
    "graph_size",
]

SCHEMA_VERSION = 1
#: The largest value of a ``u32`` field (spec 01): a map's concurrency, a fold's passes, an
#: agent's budget. The one definition; the parser, the agent reader and the forms read it here.
U32_MAX = 4294967295
#: The largest value of a ``u64`` field (spec 01: a delay's seconds) and of the integers the
#: strict JSON reader keeps exact. The one definition, beside ``U32_MAX``.
U64_MAX = 18446744073709551615

#: Where a level of a document is: the ids of the map or fold nodes whose subgraph bodies lead
#: to it, outermost first (``()`` for the top level). Validation errors name it as their
#: ``subgraph`` key, the editor as its ``in`` parameters, the canvas and a run's trace by it.
SubgraphPath = tuple[str, ...]

FieldType = Literal[
    "string", "u32", "u64", "json", "string_map", "cases", "body", "join", "on_bound"
]


@dataclass(slots=True)
class FieldSpec:
    """One payload field: its wire name, type, and ``null``/absence rules.

    ``required`` fields must be present. ``optional`` fields (``?`` in spec 01)
    may be absent or ``null``, both meaning unset. A field that is neither (the
    tool ``input``) may be absent but not ``null``.
    """

    name: str
    type: FieldType
    required: bool
    description: str
    optional: bool = False


def _id() -> FieldSpec:
    return FieldSpec("id", "string", True, "The node's stable id, unique within the document.")


def _name() -> FieldSpec:
    return FieldSpec(
        "name",
        "string",
        False,
        "Optional display name (at most 64 characters, not blank); part of the hash.",
        optional=True,
    )


def _schema(name: str, description: str) -> FieldSpec:
    return FieldSpec(name, "json", False, description, optional=True)


PAYLOAD_FIELDS: dict[str, tuple[FieldSpec, ...]] = {
    "agent": (
        _id(),
        FieldSpec(
            "agent_hash",
            "string",
            True,
            "Content hash of the agent definition, `sha256:<64 lowercase hex>`.",
        ),
        _name(),
        _schema("input_schema", "Optional JSON Schema of the value this node consumes."),
        _schema("output_schema", "Optional JSON Schema of the value this node produces."),
    ),
    "tool": (
        _id(),
        FieldSpec("tool", "string", True, "The registered tool's name."),
        _name(),
        FieldSpec(
            "input",
            "string_map",
            False,
            "Tool input field name to a reference into the routed value; omitted when empty.",
        ),
        _schema("input_schema", "Optional JSON Schema of the value this node consumes."),
        _schema("output_schema", "Optional JSON Schema of the value this node produces."),
    ),
    "gate": (
        _id(),
        _name(),
        FieldSpec(
            "prompt",
            "string",
            False,
            "Optional prompt shown in the approval inbox.",
            optional=True,
        ),
        FieldSpec(
            "approval_schema",
            "json",
            True,
            "JSON Schema the approval input must satisfy (must be a JSON object).",
        ),
    ),
    "branch": (
        _id(),
        _name(),
        FieldSpec(
            "on",
            "string",
            False,
            "Optional reference to the value the cases are evaluated against.",
            optional=True,
        ),
        FieldSpec(
            "agent_hash",
            "string",
            False,
            "Hash of the agent that decides model-decision cases.",
            optional=True,
        ),
        FieldSpec("cases", "cases", True, "The named cases, first match wins."),
    ),
    "map": (
        _id(),
        _name(),
        FieldSpec("over", "string", True, "Reference to the list this node fans out over."),
        FieldSpec("concurrency", "u32", True, "Most items in flight at once (at least 1)."),
        FieldSpec("body", "body", True, "What each element runs through."),
        _schema("output_schema", "Optional JSON Schema of the joined list."),
    ),
    "fold": (
        _id(),
        _name(),
        FieldSpec("body", "body", True, "What each pass runs."),
        FieldSpec("max_iterations", "u32", True, "The most passes the loop may run (at least 1)."),
        FieldSpec("stop_when", "string", True, "Condition that stops the loop when it holds."),
        FieldSpec("join", "join", True, "How the passes are joined into one value."),
        FieldSpec(
            "on_bound",
            "on_bound",
            False,
            "What reaching max_iterations without `stop_when` holding means: `join` (the "
            "default: join the passes anyway) or `fail` (fail the run).",
            optional=True,
        ),
        _schema("accumulator_schema", "Optional JSON Schema of the accumulated value (data only)."),
    ),
    "delay": (
        _id(),
        _name(),
        FieldSpec("seconds", "u64", True, "How long the run waits here, in whole seconds."),
    ),
}

KINDS: tuple[str, ...] = tuple(PAYLOAD_FIELDS)
#: The variants of the adjacently tagged ``{"kind", "value"}`` sub-objects, and
#: which of them carry a value.
CONDITION_KINDS = ("expression", "model_decision")
BODY_KINDS = ("node", "subgraph")
JOIN_KINDS = ("best_by", "last", "all")
UNIT_VARIANTS = frozenset({"model_decision", "last", "all"})
#: The words of ``fold.on_bound``; unset means ``join``.
ON_BOUND_WORDS = ("join", "fail")


# --- tagged sub-objects -------------------------------------------------------


@dataclass(slots=True)
class ExpressionCondition:
    """A branch case chosen by a condition expression (spec 03)."""

    expression: str
    kind: ClassVar[Literal["expression"]] = "expression"


@dataclass(slots=True)
class ModelDecision:
    """A branch case chosen at run time by the branch's decision agent."""

    kind: ClassVar[Literal["model_decision"]] = "model_decision"


@dataclass(slots=True)
class BranchCase:
    name: str
    when: ExpressionCondition | ModelDecision


@dataclass(slots=True)
class NodeBody:
    """A map/fold body that names another node of the same document."""

    node: str
    kind: ClassVar[Literal["node"]] = "node"


@dataclass(slots=True)
class SubgraphBody:
    """A map/fold body that embeds a whole graph."""

    graph: Graph
    kind: ClassVar[Literal["subgraph"]] = "subgraph"


@dataclass(slots=True)
class BestBy:
    reference: str
    kind: ClassVar[Literal["best_by"]] = "best_by"


@dataclass(slots=True)
class JoinLast:
    kind: ClassVar[Literal["last"]] = "last"


@dataclass(slots=True)
class JoinAll:
    kind: ClassVar[Literal["all"]] = "all"


Body = NodeBody | SubgraphBody
Join = BestBy | JoinLast | JoinAll


# --- nodes --------------------------------------------------------------------


@dataclass(slots=True)
class AgentNode:
    id: str
    agent_hash: str
    name: str | None = None
    input_schema: Any = None
    output_schema: Any = None
    kind: ClassVar[Literal["agent"]] = "agent"


@dataclass(slots=True)
class ToolNode:
    id: str
    tool: str
    name: str | None = None
    input: dict[str, str] = field(default_factory=dict)
    input_schema: Any = None
    output_schema: Any = None
    kind: ClassVar[Literal["tool"]] = "tool"


@dataclass(slots=True)
class GateNode:
    id: str
    approval_schema: Any
    name: str | None = None
    prompt: str | None = None
    kind: ClassVar[Literal["gate"]] = "gate"


@dataclass(slots=True)
class BranchNode:
    id: str
    cases: tuple[BranchCase, ...]
    name: str | None = None
    on: str | None = None
    agent_hash: str | None = None
    kind: ClassVar[Literal["branch"]] = "branch"


@dataclass(slots=True)
class MapNode:
    id: str
    over: str
    concurrency: int
    body: Body
    name: str | None = None
    output_schema: Any = None
    kind: ClassVar[Literal["map"]] = "map"


@dataclass(slots=True)
class FoldNode:
    id: str
    body: Body
    max_iterations: int
    stop_when: str
    join: Join
    name: str | None = None
    on_bound: Literal["join", "fail"] | None = None
    accumulator_schema: Any = None
    kind: ClassVar[Literal["fold"]] = "fold"


@dataclass(slots=True)
class DelayNode:
    """A wait of ``seconds`` whole seconds; its output is its input (spec 08, section 1)."""

    id: str
    seconds: int
    name: str | None = None
    kind: ClassVar[Literal["delay"]] = "delay"


Node = AgentNode | ToolNode | GateNode | BranchNode | MapNode | FoldNode | DelayNode

NODE_CLASSES: dict[str, type] = {
    cls.kind: cls
    for cls in (AgentNode, ToolNode, GateNode, BranchNode, MapNode, FoldNode, DelayNode)
}


def input_schema_of(node: Node) -> Any:
    """The schema a node declares for what it consumes (agent and tool only)."""
    if isinstance(node, (AgentNode, ToolNode)):
        return node.input_schema
    return None


def output_schema_of(node: Node) -> Any:
    """The schema a node declares for what it produces (agent, tool and map only)."""
    if isinstance(node, (AgentNode, ToolNode, MapNode)):
        return node.output_schema
    return None


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    label: str | None = None


@dataclass(slots=True)
class Graph:
    """A parsed graph document. Compare graphs by :func:`graph_hash`, not ``==``."""

    schema_version: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = ()
    # The document as plain JSON values, normalised like the wire form (unset
    # optionals and an empty tool ``input`` dropped, ``edges`` present) but in
    # no particular key order: what the canonical form and the hash are made of.
    # The parser fills it; for graphs built in code it is derived on first use.
    _document: Any = field(default=None, compare=False, repr=False)


def graph_size(graph: Graph) -> tuple[int, int]:
    """(nodes, edges) of ``graph``, counting the contents of subgraph bodies."""
    nodes = edges = 0
    pending = [graph]
    while pending:
        current = pending.pop()
        nodes += len(current.nodes)
        edges += len(current.edges)
        for node in current.nodes:
            body = getattr(node, "body", None)
            if isinstance(body, SubgraphBody):
                pending.append(body.graph)
    return nodes, edges
