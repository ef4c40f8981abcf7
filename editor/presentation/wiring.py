"""A node's data as its form shows it: what it **Receives** and **Gives** (read from the
document's schemas by :mod:`editor.graph.dataflow`), the paths each reference field offers, and
the hints beside its fields.

Everything is computed on first use: the node form reads the panels and the pickers only when
it is drawn whole (opening a node, a structural edit), never while a field is typed in; the
hints come from the document's hints, made once per draft text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from editor.graph.dataflow import (
    DataFlow,
    DescribedPath,
    Inflow,
    Shape,
    array_paths,
    shape_at,
    shape_paths,
    value_paths,
)
from editor.graph.errors import ExpressionError
from editor.graph.expressions import MISSING, parse_reference
from editor.graph.hints import Hint
from editor.graph.jsonio import pretty_json
from editor.graph.model import (
    AgentNode,
    BranchNode,
    DelayNode,
    FoldNode,
    GateNode,
    MapNode,
    Node,
    NodeBody,
    SubgraphPath,
    ToolNode,
)

__all__ = [
    "FlowView",
    "NodeWiring",
    "PathOption",
    "focus_id",
    "hint_field_key",
    "hints_by_field",
]


@dataclass(frozen=True, slots=True)
class PathOption:
    """One path a picker offers: the ``reference`` it writes, and what it is, in words."""

    reference: str
    label: str


@dataclass(frozen=True, slots=True)
class FlowView:
    """One value as the node panel shows it: where it comes from, the paths its schemas
    describe, the schemas as JSON, or why nothing describes it."""

    heading: str
    paths: tuple[DescribedPath, ...] = ()
    schemas: tuple[str, ...] = ()
    unknown: str = ""


def hint_field_key(hint: Hint, node: Mapping[str, Any] | None = None) -> str:
    """The node form's key of the field a hint is about (``""``: the form as a whole)."""
    if hint.field.startswith("input."):
        return "input"
    if hint.field == "best_by":
        return "join"
    if hint.field == "case":
        return f"case-{hint.case}-value"
    return hint.field


def hints_by_field(hints: Iterable[Hint]) -> dict[str, list[str]]:
    """The hints of one node by the key of the field they are beside."""
    found: dict[str, list[str]] = {}
    for hint in hints:
        found.setdefault(hint_field_key(hint), []).append(hint.beside)
    return found


def focus_id(key: str, node: Mapping[str, Any] | None) -> str:
    """The id of the control a link to field ``key`` of ``node`` (a wire node) focuses, or
    ``""`` (the form's first control)."""
    payload = node["payload"] if node is not None else {}
    if key == "join":
        return "f-join_value"
    if key == "body":
        body = payload.get("body") or {}
        return "f-body_node" if body.get("kind", "node") == "node" else "f-body_kind"
    if key == "cases":
        return "f-case-0-name" if payload.get("cases") else "add-case"
    if key in ("", "node"):
        return ""
    return f"f-{key}"


def _type_words(path: DescribedPath) -> str:
    return path.type or "not said"


def _options(
    paths: Iterable[DescribedPath], tested: Iterable[DescribedPath] = ()
) -> list[PathOption]:
    """The test run's paths first (what actually arrived), then the schemas' others."""
    options: dict[str, PathOption] = {}
    for path in tested:
        options[path.reference] = PathOption(
            path.reference, f"{_type_words(path)} in the latest test run"
        )
    for path in paths:
        if path.reference not in options:
            words = _type_words(path) + (f" · {path.title}" if path.title else "")
            options[path.reference] = PathOption(path.reference, words)
    return list(options.values())


class NodeWiring:
    """What flows into and out of one node, and what its reference fields offer.

    ``tested`` gives what the node received in the document's latest test run that reached it
    (``MISSING`` when none did): asked at most once, and only when a picker is drawn.
    """

    def __init__(
        self,
        flow: DataFlow,
        level: SubgraphPath,
        node_id: str,
        tested: Callable[[], Any] | None = None,
    ) -> None:
        self.flow = flow
        self.level = level
        self.node_id = node_id
        self._tested = tested

    @cached_property
    def node(self) -> Node | None:
        return self.flow.node(self.level, self.node_id)

    @cached_property
    def tested(self) -> Any:
        """The value the node received in the latest test run (``MISSING``: none)."""
        if self._tested is None:
            return MISSING
        return self._tested()

    # Receives and Gives ----------------------------------------------------------------------

    @cached_property
    def receives(self) -> list[FlowView]:
        return [self._inflow(inflow) for inflow in self.flow.receives(self.level, self.node_id)]

    @cached_property
    def gives(self) -> FlowView:
        node = self.node
        shape = self.flow.gives(self.level, self.node_id)
        heading = _gives_heading(node)
        if shape is None:
            return FlowView(heading, unknown=self._gives_unknown(node))
        return _view(heading, shape)

    def _inflow(self, inflow: Inflow) -> FlowView:
        source = inflow.source
        if inflow.origin == "input":
            heading = "The run's input"
            unknown = "No entry node declares an input schema for the run's input, or they differ."
        elif inflow.origin == "item":
            heading = f"One item of the list `{source}` maps over"
            unknown = f"Nothing describes the items of `{source}`'s `over`."
        elif inflow.origin == "pass":
            heading = f"First pass: what `{source}` receives"
            unknown = f"Nothing describes what `{source}` receives."
        elif inflow.origin == "previous":
            heading = "Later passes: what the previous pass gave"
            unknown = "Nothing describes what a pass gives."
        else:
            upstream = self.flow.node(self.level, source) if source is not None else None
            heading = f"From `{source}`" + (f" ({upstream.kind})" if upstream else "")
            unknown = self._gives_unknown(upstream)
        if inflow.shape is None:
            return FlowView(heading, unknown=unknown)
        return _view(heading, inflow.shape)

    def _gives_unknown(self, node: Node | None) -> str:
        if isinstance(node, (AgentNode, ToolNode)):
            return f"`{node.id}` declares no output schema."
        if isinstance(node, GateNode):
            return f"The approval schema of `{node.id}` is not an object."
        if isinstance(node, (BranchNode, DelayNode)):
            return f"`{node.id}` passes on what it receives, and nothing describes that."
        if isinstance(node, (MapNode, FoldNode)):
            body = node.body
            if isinstance(body, NodeBody):
                return f"Its body node `{body.node}` declares no output schema."
            return "Nothing describes what its subgraph body gives."
        return "Nothing describes it."

    # Pickers ---------------------------------------------------------------------------------

    @cached_property
    def received(self) -> Shape:
        return self.flow.received(self.level, self.node_id)

    @cached_property
    def tested_paths(self) -> list[DescribedPath]:
        value = self.tested
        return [] if value is MISSING else value_paths(value)

    @cached_property
    def has_test_values(self) -> bool:
        return bool(self.tested_paths)

    @cached_property
    def over(self) -> list[PathOption]:
        """What a map's ``over`` offers: the lists that flow in (every path when none does)."""
        described = shape_paths(self.received)
        tested = self.tested_paths
        lists = array_paths(described)
        tested_lists = array_paths(tested)
        if lists or tested_lists:
            return _options(lists, tested_lists)
        return _options(described, tested)

    @cached_property
    def received_paths(self) -> list[PathOption]:
        """What ``on``, a branch's cases (without ``on``) and a tool's input offer."""
        return _options(shape_paths(self.received), self.tested_paths)

    @cached_property
    def case_paths(self) -> list[PathOption]:
        """What a branch's cases offer: the paths inside the value at ``on``, when it is set."""
        node = self.node
        if not isinstance(node, BranchNode) or node.on is None:
            return self.received_paths
        try:
            segments = parse_reference(node.on).segments
        except ExpressionError:
            return []
        outcome, there = shape_at(self.received, segments)
        tested: list[DescribedPath] = []
        if self.tested is not MISSING:
            value = parse_reference(node.on).resolve(self.tested)
            tested = [] if value is MISSING else value_paths(value)
        return _options(shape_paths(there) if outcome else [], tested)

    @cached_property
    def pass_paths(self) -> list[PathOption]:
        """What a fold's ``stop_when`` and ``best_by`` offer: the paths a pass's output has."""
        node = self.node
        if not isinstance(node, FoldNode):
            return []
        return _options(shape_paths(self.flow.body_output(self.level, node)))


def _gives_heading(node: Node | None) -> str:
    if isinstance(node, GateNode):
        return "What the approver gives (its approval schema)"
    if isinstance(node, (BranchNode, DelayNode)):
        return "What it passes on (what it receives)"
    if isinstance(node, MapNode):
        return "A list: each item's output" if node.output_schema is None else "Its output schema"
    if isinstance(node, FoldNode):
        return "What its join gives"
    return "Its output schema"


def _view(heading: str, shape: tuple[Any, ...]) -> FlowView:
    return FlowView(
        heading,
        paths=tuple(shape_paths(shape)),
        schemas=tuple(pretty_json(schema) for schema in shape),
    )
