"""The checks of one document level: the top document or one subgraph body."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Unpack

from editor.graph.errors import ErrorData, ErrorKeys, ExpressionError
from editor.graph.expressions import json_equal, parse_expression, parse_reference
from editor.graph.jsonio import canonical_json
from editor.graph.model import (
    SCHEMA_VERSION,
    AgentNode,
    BestBy,
    BranchNode,
    DelayNode,
    ExpressionCondition,
    FoldNode,
    GateNode,
    Graph,
    MapNode,
    Node,
    NodeBody,
    SubgraphPath,
    ToolNode,
    input_schema_of,
    output_schema_of,
)
from editor.graph.suggest import Suggester, suggest_suffix
from editor.graph.text import is_blank
from editor.graph.validation.fold_shapes import fold_shape_errors
from editor.graph.validation.schemas import SchemaBudget, check_node_schemas

__all__ = ["MAX_ID_LENGTH", "MAX_NAME_LENGTH", "Level", "is_well_formed_agent_hash"]

MAX_NAME_LENGTH = 64
#: Characters (code points) in a node id (E11); the reference sets no limit.
MAX_ID_LENGTH = 256
#: Characters of an over-long id that its E11 message repeats.
_ID_SHOWN = 64

_AGENT_HASH = re.compile(r"sha256:[0-9a-f]{64}")


def is_well_formed_agent_hash(value: str) -> bool:
    return _AGENT_HASH.fullmatch(value) is not None


#: Kinds that declare an output schema, and kinds that declare an input schema (check 9).
_PRODUCERS = frozenset({"agent", "tool", "map"})
_CONSUMERS = frozenset({"agent", "tool"})

_CHECK_ORDER = (
    "schema_version",
    "unique_ids",
    "dangling_edges",
    "dangling_bodies",
    "node_fields",
    "names",
    "branch_expressions",
    "branch_cases",
    "branch_edge_labels",
    "branch_unlabelled_edges",
    "fold_expressions",
    "fold_shapes",
    "acyclic",
    "edge_types",
    "E4",
    "E5",
    "E6",
    "E7",
    "E9",
    "E10",
    "E11",
)


class Level:
    """The checks of one document level (the top document or one subgraph).

    One pass over the edges and one over the nodes fill a bucket per check;
    the buckets are then read in :data:`_CHECK_ORDER`, which is the spec's order.
    A pass per check would read the same, and cost three times as much on a
    10,000-node document validated on every keystroke.
    """

    def __init__(
        self, graph: Graph, owners: SubgraphPath, schema_budget: SchemaBudget | None = None
    ) -> None:
        self.graph = graph
        self.owners = owners
        #: Shared by every level of a document (E10's ``schemas_too_large``).
        self.schema_budget = schema_budget or SchemaBudget()
        self.prefix = "".join(f"in the subgraph of `{owner}`: " for owner in owners)
        self.buckets: dict[str, list[ErrorData]] = {name: [] for name in _CHECK_ORDER}
        self.by_id: dict[str, Node] = {}
        for node in graph.nodes:
            self.by_id[node.id] = node  # the last node with an id wins (spec 02)
        self._suggest: Suggester | None = None
        self._keys: dict[int, bytes] = {}
        self.labels: defaultdict[str, set[str]] = defaultdict(set)
        self.touched: set[str] = set()
        self.adjacency: defaultdict[str, list[str]] = defaultdict(list)

    @property
    def errors(self) -> list[ErrorData]:
        return [error for name in _CHECK_ORDER for error in self.buckets[name]]

    def error(self, code: str, message: str, **extra: Unpack[ErrorKeys]) -> ErrorData:
        error: ErrorData = {"code": code, "message": self.prefix + message, **extra}
        if self.owners:
            error["subgraph"] = list(self.owners)
        return error

    def add(self, check: str, code: str, message: str, **extra: Unpack[ErrorKeys]) -> None:
        self.buckets[check].append(self.error(code, message, **extra))

    def _at_least_one(self, node: Node, field: str, shown: str, found: int) -> None:
        """A map's concurrency, a fold's max_iterations or a delay's seconds (``field``, read as
        ``shown``): ``non_positive_{field}``."""
        if found < 1:
            self.add(
                "node_fields",
                f"non_positive_{field}",
                f"{node.kind} node `{node.id}`: {shown} must be at least 1, found {found}",
                node=node.id,
                found=found,
            )

    def key(self, value: Any) -> bytes:
        """The canonical bytes of a free JSON value, computed once per object."""
        found = self._keys.get(id(value))
        if found is None:
            found = self._keys[id(value)] = canonical_json(value)
        return found

    def suggest(self, missing: str) -> str | None:
        if self._suggest is None:
            self._suggest = Suggester(self.by_id)
        return self._suggest(missing)

    def run(self) -> None:
        found = self.graph.schema_version
        if found == 0 or found > SCHEMA_VERSION:
            self.add(
                "schema_version",
                "unsupported_schema_version",
                f"unsupported schema_version {found}: "
                f"this build understands versions 1..={SCHEMA_VERSION}",
                found=found,
                supported=SCHEMA_VERSION,
            )
        self.edge_pass()
        self.node_pass()
        self.check_acyclic()

    # --- the edge pass: 3a, 7b, 7c, 11, and what the node pass needs ---------

    def edge_pass(self) -> None:
        known = self.by_id
        labels = self.labels
        adjacency = self.adjacency
        case_suggesters: dict[int, Suggester] = {}
        edges = self.graph.edges
        self.touched = {edge.source for edge in edges} | {edge.target for edge in edges}
        for edge in edges:
            source_id = edge.source
            target_id = edge.target
            label = edge.label
            if label is not None:
                labels[source_id].add(label)
            source = known.get(source_id)
            target = known.get(target_id)
            if source is None or target is None:
                if source is None:
                    self._dangling_edge(source_id, target_id, source_id)
                if target is None:
                    self._dangling_edge(source_id, target_id, target_id)
                if source is None:
                    continue
            else:
                adjacency[source_id].append(target_id)
                if source.kind in _PRODUCERS and target.kind in _CONSUMERS:
                    self._edge_type(source, target)
            if source.kind == "branch":
                self._branch_edge(source, edge, case_suggesters)

    def _dangling_edge(self, source: str, target: str, missing: str) -> None:
        suggestion = self.suggest(missing)
        self.add(
            "dangling_edges",
            "dangling_edge",
            f"edge `{source}` -> `{target}` references unknown node id "
            f"`{missing}`{suggest_suffix(suggestion)}",
            edge={"from": source, "to": target},
            missing=missing,
            suggestion=suggestion,
        )

    def _edge_type(self, source: Node, target: Node) -> None:
        produced = output_schema_of(source)
        if produced is None:
            return
        consumed = input_schema_of(target)
        if (
            consumed is None
            or self.key(produced) == self.key(consumed)
            or json_equal(produced, consumed)
        ):
            return
        self.add(
            "edge_types",
            "edge_type_mismatch",
            f"edge `{source.id}` -> `{target.id}`: the output schema of "
            f"`{source.id}` does not match the input schema of `{target.id}`",
            edge={"from": source.id, "to": target.id},
        )

    def _branch_edge(self, branch: Any, edge: Any, suggesters: dict[int, Suggester]) -> None:
        if edge.label is None:
            self.add(
                "branch_unlabelled_edges",
                "branch_edge_without_label",
                f"branch node `{edge.source}`: the edge to `{edge.target}` has no label "
                "naming a case",
                node=edge.source,
                to=edge.target,
            )
            return
        names = [case.name for case in branch.cases]
        if edge.label in names:
            return
        suggester = suggesters.get(id(branch))
        if suggester is None:
            suggester = suggesters[id(branch)] = Suggester(names)
        suggestion = suggester(edge.label)
        self.add(
            "branch_edge_labels",
            "branch_edge_without_case",
            f"branch node `{edge.source}`: edge label `{edge.label}` names no "
            f"case{suggest_suffix(suggestion)}",
            node=edge.source,
            to=edge.target,
            label=edge.label,
            suggestion=suggestion,
        )

    # --- the node pass: 2, 3b/3c, 4, 5, 6, 7, E3-E7, E9 ------------------------

    def node_pass(self) -> None:
        seen: set[str] = set()
        in_subgraph = bool(self.owners)
        for node in self.graph.nodes:
            node_id = node.id
            if node_id in seen:
                self.add(
                    "unique_ids",
                    "duplicate_node_id",
                    f"duplicate node id `{node_id}`",
                    node=node_id,
                )
            seen.add(node_id)
            if isinstance(node, AgentNode):
                if not is_well_formed_agent_hash(node.agent_hash):
                    self._malformed_hash("node_fields", node_id, node.agent_hash)
            elif isinstance(node, ToolNode):
                for key in sorted(node.input):
                    self._reference(node, f"input.{key}", node.input[key])
            elif isinstance(node, GateNode):
                if type(node.approval_schema) is not dict:
                    self.add(
                        "node_fields",
                        "approval_schema_not_object",
                        f"gate node `{node_id}`: approval_schema must be a JSON object",
                        node=node_id,
                    )
                if in_subgraph:
                    self._not_in_subgraph(node)
            elif isinstance(node, BranchNode):
                self._branch(node)
            elif isinstance(node, MapNode):
                self._body(node, "maps")
                self._at_least_one(node, "concurrency", "concurrency cap", node.concurrency)
                self._reference(node, "over", node.over)
            elif isinstance(node, FoldNode):
                self._body(node, "folds")
                self._at_least_one(node, "max_iterations", "max_iterations", node.max_iterations)
                self._fold_expressions(node)
                for code, message, keys in fold_shape_errors(node, self.by_id):
                    self.add("fold_shapes", code, message, **keys)
            else:
                self._at_least_one(node, "delay", "seconds", node.seconds)
                if in_subgraph:
                    self._not_in_subgraph(node)
            if node.name is not None:
                self._name(node, node.name)
            check_node_schemas(self, node)
            if len(node_id) > MAX_ID_LENGTH:
                self._long_id(node_id)

    def _not_in_subgraph(self, node: GateNode | DelayNode) -> None:
        """E9: nothing inside a map item or a fold pass can park the run."""
        self.add(
            "E9",
            "unsupported_in_subgraph",
            f"node `{node.id}`: a {node.kind} node cannot be inside a subgraph body",
            node=node.id,
            kind=node.kind,
        )

    def _long_id(self, node_id: str) -> None:
        self.add(
            "E11",
            "node_id_too_long",
            f"node `{node_id[:_ID_SHOWN]}…`: the id is {len(node_id)} characters, "
            f"over the {MAX_ID_LENGTH}-character cap",
            node=node_id,
            len=len(node_id),
            max=MAX_ID_LENGTH,
        )

    def _malformed_hash(self, check: str, node_id: str, value: str) -> None:
        self.add(
            check,
            "malformed_agent_hash",
            f"agent node `{node_id}`: `{value}` is not a well-formed `sha256:<64 hex>` agent hash",
            node=node_id,
            hash=value,
        )

    def _name(self, node: Node, name: str) -> None:
        if is_blank(name):
            self.add(
                "names",
                "blank_node_name",
                f"node `{node.id}`: `name`, if set, must not be empty or all whitespace",
                node=node.id,
            )
        elif len(name) > MAX_NAME_LENGTH:
            self.add(
                "names",
                "node_name_too_long",
                f"node `{node.id}`: `name` is {len(name)} characters, "
                f"over the {MAX_NAME_LENGTH}-character cap",
                node=node.id,
                len=len(name),
                max=MAX_NAME_LENGTH,
            )

    def _body(self, owner: MapNode | FoldNode, verb: str) -> None:
        """3b/3c (a dangling body node) or E7 (a body node that cannot be one)."""
        if not isinstance(owner.body, NodeBody):
            return
        body_id = owner.body.node
        body = self.by_id.get(body_id)
        if body is None:
            suggestion = self.suggest(body_id)
            self.add(
                "dangling_bodies",
                f"dangling_{owner.kind}_body",
                f"{owner.kind} node `{owner.id}` {verb} unknown node id "
                f"`{body_id}`{suggest_suffix(suggestion)}",
                node=owner.id,
                missing=body_id,
                suggestion=suggestion,
            )
            return
        if body_id in self.touched:
            self.add(
                "E7",
                "body_node_has_edges",
                f"node `{body_id}` is the body of `{owner.id}` and cannot also have edges",
                node=body_id,
                owner=owner.id,
            )
        if body.kind != "agent" and body.kind != "tool":
            self.add(
                "E7",
                "unsupported_body_kind",
                f"node `{body_id}` is the body of `{owner.id}` but a {body.kind} node "
                "cannot be a body",
                node=body_id,
                owner=owner.id,
                kind=body.kind,
            )

    def _branch(self, node: BranchNode) -> None:
        node_id = node.id
        if node.agent_hash is not None and not is_well_formed_agent_hash(node.agent_hash):
            self._malformed_hash("branch_expressions", node_id, node.agent_hash)
        realized = self.labels.get(node_id, ())
        seen: set[str] = set()
        for case in node.cases:
            name = case.name
            if isinstance(case.when, ExpressionCondition):
                try:
                    parse_expression(case.when.expression)
                except ExpressionError as error:
                    self.add(
                        "branch_expressions",
                        "invalid_branch_expression",
                        f"branch node `{node_id}`: case `{name}` has an invalid "
                        f"condition expression: {error}",
                        node=node_id,
                        case=name,
                        error=str(error),
                    )
            elif node.agent_hash is None:
                self.add(
                    "branch_expressions",
                    "model_decision_without_agent",
                    f"branch node `{node_id}`: case `{name}` is a model decision "
                    "but the branch declares no `agent_hash`",
                    node=node_id,
                    case=name,
                )
            if name not in realized:
                self.add(
                    "branch_cases",
                    "branch_case_without_edge",
                    f"branch node `{node_id}`: case `{name}` has no outbound edge; point the "
                    "case at a node, and point a route meant to end the run at a terminal node "
                    "instead",
                    node=node_id,
                    case=name,
                )
            if name in seen:
                self.add(
                    "E4",
                    "duplicate_branch_case",
                    f"branch node `{node_id}`: case name `{name}` is used more than once",
                    node=node_id,
                    case=name,
                )
            seen.add(name)
        if not node.cases:
            self.add(
                "E4",
                "branch_without_cases",
                f"branch node `{node_id}` declares no cases",
                node=node_id,
            )
        if node.on is not None:
            self._reference(node, "on", node.on)

    def _fold_expressions(self, node: FoldNode) -> None:
        try:
            parse_expression(node.stop_when)
        except ExpressionError as error:
            self.add(
                "fold_expressions",
                "invalid_fold_stop_expression",
                f"fold node `{node.id}`: `stop_when` is not a valid condition expression: {error}",
                node=node.id,
                error=str(error),
            )
        if isinstance(node.join, BestBy):
            try:
                parse_reference(node.join.reference)
            except ExpressionError as error:
                self.add(
                    "fold_expressions",
                    "invalid_fold_join_reference",
                    f"fold node `{node.id}`: the `best_by` join reference "
                    f"`{node.join.reference}` is not a valid path: {error}",
                    node=node.id,
                    reference=node.join.reference,
                    error=str(error),
                )

    def _reference(self, node: Node, field: str, reference: str) -> None:
        try:
            parse_reference(reference)
        except ExpressionError as error:
            self.add(
                "E5",
                "invalid_reference",
                f"{node.kind} node `{node.id}`: `{field}` reference `{reference}` is not a "
                f"valid path: {error}",
                node=node.id,
                field=field,
                reference=reference,
                error=str(error),
            )

    # --- check 8 ----------------------------------------------------------------

    def check_acyclic(self) -> None:
        """Depth-first search in document order, neighbours in edge order (spec 02)."""
        adjacency = self.adjacency
        # Absent: not yet visited; True: on the current path; False: finished.
        on_path: dict[str, bool] = {}
        for start in self.graph.nodes:
            start_id = start.id
            if start_id in on_path:
                continue
            if start_id not in adjacency:
                on_path[start_id] = False
                continue
            on_path[start_id] = True
            path = [start_id]
            pending = [iter(adjacency[start_id])]
            while pending:
                neighbour = next(pending[-1], None)  # node ids are strings, never None
                if neighbour is None:
                    on_path[path.pop()] = False
                    pending.pop()
                    continue
                state = on_path.get(neighbour)
                if state is None:
                    on_path[neighbour] = True
                    path.append(neighbour)
                    pending.append(iter(adjacency.get(neighbour, ())))
                elif state:
                    cycle = [*path[path.index(neighbour) :], neighbour]
                    text = " -> ".join(cycle)
                    self.add("acyclic", "cycle", f"cycle detected: {text}", path=text)
                    return
