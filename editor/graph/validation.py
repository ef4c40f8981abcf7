"""Collect-all validation of a parsed graph (spec 02).

The reference checks 1–9 run first, in the reference's order and loop order,
with its exact codes, extra keys and messages; then our extensions E1–E7 and E9,
one pass each; then, per E8, every embedded subgraph is validated the same way,
depth-first in document order, its errors carrying the owner chain. E0 runs
before everything and, when the document is over the size caps, is the only
error. Errors are plain dicts whose keys come in the order the API returns them.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from editor.graph.errors import ExpressionError
from editor.graph.expressions import parse_expression, parse_reference
from editor.graph.jsonio import MAX_DEPTH
from editor.graph.model import (
    PAYLOAD_FIELDS,
    SCHEMA_VERSION,
    AgentNode,
    BestBy,
    BranchNode,
    ExpressionCondition,
    FoldNode,
    GateNode,
    Graph,
    MapNode,
    Node,
    NodeBody,
    SubgraphBody,
    ToolNode,
    input_schema_of,
    output_schema_of,
)
from editor.graph.suggest import Suggester, suggest_suffix
from editor.graph.text import is_blank

__all__ = [
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "MAX_NAME_LENGTH",
    "MAX_NESTING",
    "json_equal",
    "summarize",
    "validate",
]

DEFAULT_MAX_NODES = 10_000
DEFAULT_MAX_EDGES = 50_000
MAX_NAME_LENGTH = 64
#: Levels of subgraph nesting, the top document being level 1 (seed 001's cap).
MAX_NESTING = 8

_AGENT_HASH = re.compile(r"sha256:[0-9a-f]{64}")
_SCHEMA_FIELDS = ("approval_schema", "input_schema", "output_schema", "accumulator_schema")
_NODE_SCHEMA_FIELDS = {
    kind: tuple(spec.name for spec in specs if spec.name in _SCHEMA_FIELDS)
    for kind, specs in PAYLOAD_FIELDS.items()
}

Error = dict[str, Any]


def is_well_formed_agent_hash(value: str) -> bool:
    return _AGENT_HASH.fullmatch(value) is not None


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality as the reference has it: ``1`` ≠ ``1.0``, ``true`` ≠ ``1``."""
    if left is right:
        return True
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if kind is list:
        return len(left) == len(right) and all(map(json_equal, left, right))
    return left == right


_SCHEMA_MEMO: dict[str, str | None] = {}
_SCHEMA_MEMO_SIZE = 4096
#: Extra stack frames for checking a deeply nested schema: jsonschema recurses
#: about eight frames per level, and the reader accepts 127 levels.
_SCHEMA_CHECK_FRAMES = 16 * (MAX_DEPTH + 1)
_RECURSION_LIMIT_LOCK = threading.Lock()


def _check_schema(schema: Any) -> None:
    """``check_schema``, retried with a raised recursion limit when the stack runs out.

    A schema near the nesting cap needs about a thousand frames, the default
    limit, so without the retry it would fail under any caller.
    """
    try:
        Draft202012Validator.check_schema(schema)
    except RecursionError:
        with _RECURSION_LIMIT_LOCK:
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(limit + _SCHEMA_CHECK_FRAMES)
            try:
                Draft202012Validator.check_schema(schema)
            finally:
                sys.setrecursionlimit(limit)


def schema_problem(schema: Any, key: str | None = None) -> str | None:
    """jsonschema's best-match message when ``schema`` is not a valid Draft 2020-12 schema.

    Memoised: checking costs about a millisecond and documents repeat schemas.
    The key is ``repr(schema)``, which is cheaper than the canonical text and
    as exact (equal reprs are equal JSON values; a miss only costs a re-check).
    """
    if key is None:
        key = repr(schema)
    if key in _SCHEMA_MEMO:
        return _SCHEMA_MEMO[key]
    try:
        _check_schema(schema)
    except SchemaError as error:
        problem: str | None = error.message
    except RecursionError:
        problem = "the schema nests too deeply to be checked"
    else:
        problem = None
    if len(_SCHEMA_MEMO) >= _SCHEMA_MEMO_SIZE:
        _SCHEMA_MEMO.clear()
    _SCHEMA_MEMO[key] = problem
    return problem


def _count(graph: Graph) -> tuple[int, int]:
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
) -> list[Error]:
    """Every problem of ``graph``, in spec order; an empty list when it is valid."""
    nodes, edges = _count(graph)
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
    errors: list[Error] = []
    _validate_level(graph, (), errors)
    return errors


def _validate_level(graph: Graph, owners: tuple[str, ...], errors: list[Error]) -> None:
    level = _Level(graph, owners)
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
            _validate_level(body.graph, (*owners, node.id), errors)


class _Level:
    """The checks of one document level (the top document or one subgraph)."""

    def __init__(self, graph: Graph, owners: tuple[str, ...]) -> None:
        self.graph = graph
        self.owners = owners
        self.prefix = "".join(f"in the subgraph of `{owner}`: " for owner in owners)
        self.errors: list[Error] = []
        self.by_id: dict[str, Node] = {}
        for node in graph.nodes:
            self.by_id[node.id] = node  # the last node with an id wins (spec 02)
        self._suggest: Suggester | None = None
        self._reprs: dict[int, str] = {}

    def key(self, value: Any) -> str:
        """``repr`` of a free JSON value, computed once per object."""
        found = self._reprs.get(id(value))
        if found is None:
            found = self._reprs[id(value)] = repr(value)
        return found

    def error(self, code: str, message: str, **extra: Any) -> Error:
        error: Error = {"code": code, "message": self.prefix + message, **extra}
        if self.owners:
            error["subgraph"] = list(self.owners)
        return error

    def add(self, code: str, message: str, **extra: Any) -> None:
        self.errors.append(self.error(code, message, **extra))

    def suggest(self, missing: str) -> str | None:
        if self._suggest is None:
            self._suggest = Suggester(self.by_id)
        return self._suggest(missing)

    def run(self) -> None:
        for check in self._checks():
            check()

    def _checks(self) -> tuple[Callable[[], None], ...]:
        return (
            self.check_schema_version,
            self.check_unique_ids,
            self.check_references,
            self.check_node_fields,
            self.check_names,
            self.check_branch_expressions,
            self.check_fold_expressions,
            self.check_acyclic,
            self.check_edge_types,
            self.check_branch_edges_have_labels,
            self.check_branch_labels_name_cases,
            self.check_branch_cases_have_edges,
            self.check_branch_cases,
            self.check_references_parse,
            self.check_schemas,
            self.check_bodies,
            self.check_subgraph_kinds,
        )

    # --- reference checks 1–9 -------------------------------------------------

    def check_schema_version(self) -> None:
        found = self.graph.schema_version
        if found == 0 or found > SCHEMA_VERSION:
            self.add(
                "unsupported_schema_version",
                f"unsupported schema_version {found}: "
                f"this build understands versions 1..={SCHEMA_VERSION}",
                found=found,
                supported=SCHEMA_VERSION,
            )

    def check_unique_ids(self) -> None:
        seen: set[str] = set()
        for node in self.graph.nodes:
            if node.id in seen:
                self.add("duplicate_node_id", f"duplicate node id `{node.id}`", node=node.id)
            seen.add(node.id)

    def _dangling_edge(self, source: str, target: str, missing: str) -> None:
        suggestion = self.suggest(missing)
        self.add(
            "dangling_edge",
            f"edge `{source}` -> `{target}` references unknown node id "
            f"`{missing}`{suggest_suffix(suggestion)}",
            edge={"from": source, "to": target},
            missing=missing,
            suggestion=suggestion,
        )

    def check_references(self) -> None:
        known = self.by_id
        for edge in self.graph.edges:
            if edge.source not in known:
                self._dangling_edge(edge.source, edge.target, edge.source)
            if edge.target not in known:
                self._dangling_edge(edge.source, edge.target, edge.target)
        for node in self.graph.nodes:
            if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody):
                missing = node.body.node
                if missing in known:
                    continue
                suggestion = self.suggest(missing)
                verb = "maps" if isinstance(node, MapNode) else "folds"
                self.add(
                    f"dangling_{node.kind}_body",
                    f"{node.kind} node `{node.id}` {verb} unknown node id "
                    f"`{missing}`{suggest_suffix(suggestion)}",
                    node=node.id,
                    missing=missing,
                    suggestion=suggestion,
                )

    def _malformed_hash(self, node_id: str, value: str) -> None:
        self.add(
            "malformed_agent_hash",
            f"agent node `{node_id}`: `{value}` is not a well-formed `sha256:<64 hex>` agent hash",
            node=node_id,
            hash=value,
        )

    def check_node_fields(self) -> None:
        for node in self.graph.nodes:
            if isinstance(node, AgentNode):
                if not is_well_formed_agent_hash(node.agent_hash):
                    self._malformed_hash(node.id, node.agent_hash)
            elif isinstance(node, MapNode):
                if node.concurrency < 1:
                    self.add(
                        "non_positive_concurrency",
                        f"map node `{node.id}`: concurrency cap must be at least 1, "
                        f"found {node.concurrency}",
                        node=node.id,
                        found=node.concurrency,
                    )
            elif isinstance(node, GateNode):
                if type(node.approval_schema) is not dict:
                    self.add(
                        "approval_schema_not_object",
                        f"gate node `{node.id}`: approval_schema must be a JSON object",
                        node=node.id,
                    )
            elif isinstance(node, FoldNode) and node.max_iterations < 1:
                self.add(
                    "non_positive_max_iterations",
                    f"fold node `{node.id}`: max_iterations must be at least 1, "
                    f"found {node.max_iterations}",
                    node=node.id,
                    found=node.max_iterations,
                )

    def check_names(self) -> None:
        for node in self.graph.nodes:
            name = node.name
            if name is None:
                continue
            if is_blank(name):
                self.add(
                    "blank_node_name",
                    f"node `{node.id}`: `name`, if set, must not be empty or all whitespace",
                    node=node.id,
                )
            elif len(name) > MAX_NAME_LENGTH:
                self.add(
                    "node_name_too_long",
                    f"node `{node.id}`: `name` is {len(name)} characters, "
                    f"over the {MAX_NAME_LENGTH}-character cap",
                    node=node.id,
                    len=len(name),
                    max=MAX_NAME_LENGTH,
                )

    def check_branch_expressions(self) -> None:
        for node in self.graph.nodes:
            if not isinstance(node, BranchNode):
                continue
            if node.agent_hash is not None and not is_well_formed_agent_hash(node.agent_hash):
                self._malformed_hash(node.id, node.agent_hash)
            for case in node.cases:
                if isinstance(case.when, ExpressionCondition):
                    try:
                        parse_expression(case.when.expression)
                    except ExpressionError as error:
                        self.add(
                            "invalid_branch_expression",
                            f"branch node `{node.id}`: case `{case.name}` has an invalid "
                            f"condition expression: {error}",
                            node=node.id,
                            case=case.name,
                            error=str(error),
                        )
                elif node.agent_hash is None:
                    self.add(
                        "model_decision_without_agent",
                        f"branch node `{node.id}`: case `{case.name}` is a model decision "
                        "but the branch declares no `agent_hash`",
                        node=node.id,
                        case=case.name,
                    )

    def check_fold_expressions(self) -> None:
        for node in self.graph.nodes:
            if not isinstance(node, FoldNode):
                continue
            try:
                parse_expression(node.stop_when)
            except ExpressionError as error:
                self.add(
                    "invalid_fold_stop_expression",
                    f"fold node `{node.id}`: `stop_when` is not a valid condition "
                    f"expression: {error}",
                    node=node.id,
                    error=str(error),
                )
            if isinstance(node.join, BestBy):
                try:
                    parse_reference(node.join.reference)
                except ExpressionError as error:
                    self.add(
                        "invalid_fold_join_reference",
                        f"fold node `{node.id}`: the `best_by` join reference "
                        f"`{node.join.reference}` is not a valid path: {error}",
                        node=node.id,
                        reference=node.join.reference,
                        error=str(error),
                    )

    def check_acyclic(self) -> None:
        known = self.by_id
        adjacency: dict[str, list[str]] = {}
        for edge in self.graph.edges:
            if edge.source in known and edge.target in known:
                adjacency.setdefault(edge.source, []).append(edge.target)
        white, gray, black = 0, 1, 2
        color = dict.fromkeys(known, white)
        for start in (node.id for node in self.graph.nodes):
            if color[start] != white:
                continue
            color[start] = gray
            path = [start]
            cursors = [0]
            while path:
                current = path[-1]
                neighbours = adjacency.get(current, ())
                cursor = cursors[-1]
                if cursor == len(neighbours):
                    color[current] = black
                    path.pop()
                    cursors.pop()
                    continue
                cursors[-1] = cursor + 1
                neighbour = neighbours[cursor]
                state = color[neighbour]
                if state == gray:
                    cycle = [*path[path.index(neighbour) :], neighbour]
                    text = " -> ".join(cycle)
                    self.add("cycle", f"cycle detected: {text}", path=text)
                    return
                if state == white:
                    color[neighbour] = gray
                    path.append(neighbour)
                    cursors.append(0)

    def check_edge_types(self) -> None:
        known = self.by_id
        for edge in self.graph.edges:
            source = known.get(edge.source)
            target = known.get(edge.target)
            if source is None or target is None:
                continue
            produced = output_schema_of(source)
            consumed = input_schema_of(target)
            if (
                produced is None
                or consumed is None
                or self.key(produced) == self.key(consumed)
                or json_equal(produced, consumed)
            ):
                continue
            self.add(
                "edge_type_mismatch",
                f"edge `{edge.source}` -> `{edge.target}`: the output schema of "
                f"`{edge.source}` does not match the input schema of `{edge.target}`",
                edge={"from": edge.source, "to": edge.target},
            )

    # --- extensions E1–E7, E9 -------------------------------------------------

    def _branch(self, node_id: str) -> BranchNode | None:
        node = self.by_id.get(node_id)
        return node if isinstance(node, BranchNode) else None

    def check_branch_edges_have_labels(self) -> None:
        for edge in self.graph.edges:
            if edge.label is None and self._branch(edge.source) is not None:
                self.add(
                    "branch_edge_without_label",
                    f"branch node `{edge.source}`: the edge to `{edge.target}` has no label "
                    "naming a case",
                    node=edge.source,
                    to=edge.target,
                )

    def check_branch_labels_name_cases(self) -> None:
        suggesters: dict[int, Suggester] = {}
        for edge in self.graph.edges:
            branch = self._branch(edge.source)
            if branch is None or edge.label is None:
                continue
            names = [case.name for case in branch.cases]
            if edge.label in names:
                continue
            suggester = suggesters.setdefault(id(branch), Suggester(names))
            suggestion = suggester(edge.label)
            self.add(
                "branch_edge_without_case",
                f"branch node `{edge.source}`: edge label `{edge.label}` names no "
                f"case{suggest_suffix(suggestion)}",
                node=edge.source,
                to=edge.target,
                label=edge.label,
                suggestion=suggestion,
            )

    def check_branch_cases_have_edges(self) -> None:
        labels: dict[str, set[str]] = {}
        for edge in self.graph.edges:
            if edge.label is not None:
                labels.setdefault(edge.source, set()).add(edge.label)
        for node in self.graph.nodes:
            if not isinstance(node, BranchNode):
                continue
            realized = labels.get(node.id, set())
            for case in node.cases:
                if case.name not in realized:
                    self.add(
                        "branch_case_without_edge",
                        f"branch node `{node.id}`: case `{case.name}` has no outbound edge "
                        "labelled with it",
                        node=node.id,
                        case=case.name,
                    )

    def check_branch_cases(self) -> None:
        for node in self.graph.nodes:
            if not isinstance(node, BranchNode):
                continue
            if not node.cases:
                self.add(
                    "branch_without_cases",
                    f"branch node `{node.id}` declares no cases",
                    node=node.id,
                )
                continue
            seen: set[str] = set()
            for case in node.cases:
                if case.name in seen:
                    self.add(
                        "duplicate_branch_case",
                        f"branch node `{node.id}`: case name `{case.name}` is used more than once",
                        node=node.id,
                        case=case.name,
                    )
                seen.add(case.name)

    def _reference(self, node: Node, field: str, reference: str) -> None:
        try:
            parse_reference(reference)
        except ExpressionError as error:
            self.add(
                "invalid_reference",
                f"{node.kind} node `{node.id}`: `{field}` reference `{reference}` is not a "
                f"valid path: {error}",
                node=node.id,
                field=field,
                reference=reference,
                error=str(error),
            )

    def check_references_parse(self) -> None:
        for node in self.graph.nodes:
            if isinstance(node, MapNode):
                self._reference(node, "over", node.over)
            elif isinstance(node, BranchNode):
                if node.on is not None:
                    self._reference(node, "on", node.on)
            elif isinstance(node, ToolNode):
                for key in sorted(node.input):
                    self._reference(node, f"input.{key}", node.input[key])

    def check_schemas(self) -> None:
        for node in self.graph.nodes:
            for field in _NODE_SCHEMA_FIELDS[node.kind]:
                schema = getattr(node, field)
                if schema is None and field != "approval_schema":
                    continue
                if field == "approval_schema" and type(schema) is not dict:
                    continue  # check 4c reported it
                problem = schema_problem(schema, self.key(schema))
                if problem is not None:
                    self.add(
                        "invalid_json_schema",
                        f"{node.kind} node `{node.id}`: `{field}` is not a valid JSON Schema: "
                        f"{problem}",
                        node=node.id,
                        field=field,
                        error=problem,
                    )

    def check_bodies(self) -> None:
        touched: set[str] = set()
        for edge in self.graph.edges:
            touched.add(edge.source)
            touched.add(edge.target)
        for owner in self.graph.nodes:
            if not isinstance(owner, (MapNode, FoldNode)) or not isinstance(owner.body, NodeBody):
                continue
            body = self.by_id.get(owner.body.node)
            if body is None:
                continue  # dangling: check 3 reported it
            if body.id in touched:
                self.add(
                    "body_node_has_edges",
                    f"node `{body.id}` is the body of `{owner.id}` and cannot also have edges",
                    node=body.id,
                    owner=owner.id,
                )
            if not isinstance(body, (AgentNode, ToolNode)):
                self.add(
                    "unsupported_body_kind",
                    f"node `{body.id}` is the body of `{owner.id}` but a {body.kind} node "
                    "cannot be a body",
                    node=body.id,
                    owner=owner.id,
                    kind=body.kind,
                )

    def check_subgraph_kinds(self) -> None:
        if not self.owners:
            return
        for node in self.graph.nodes:
            if isinstance(node, GateNode):
                self.add(
                    "unsupported_in_subgraph",
                    f"node `{node.id}`: a {node.kind} node cannot be inside a subgraph body",
                    node=node.id,
                    kind=node.kind,
                )
