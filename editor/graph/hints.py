"""Hints: what the editor points out beside the verdict, never part of it.

A hint names something a careful author would want to know before a run finds it, where the
document is still valid: a reference that reads a path nothing flowing in describes (spec 08's
walk of the fold shape checks, applied to every other reference, against what
:mod:`editor.graph.dataflow` says flows in), a map whose ``over`` reads something described as
not a list, an edge listed twice, a node id that is empty or has characters other than
``[A-Za-z0-9_.-]``. Hints are shown and counted apart from the errors; they never block
freezing and never change a document's verdict or hash.

A hint is data, like an error: a code, a message (with the E8 prefix inside a subgraph), the
node and the field it is about, and the level it is at.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from editor.graph.dataflow import DataFlow, Inflow, Shape, shape_at
from editor.graph.errors import ExpressionError
from editor.graph.expressions import Segment, parse_expression, parse_reference
from editor.graph.model import (
    BestBy,
    BranchNode,
    ExpressionCondition,
    FoldNode,
    Graph,
    MapNode,
    Node,
    SubgraphBody,
    SubgraphPath,
    ToolNode,
)
from editor.graph.validation.fold_shapes import condition_paths

__all__ = ["ID_CHARACTERS", "Hint", "document_hints", "node_hints"]

#: The characters an id reads well with everywhere (edges, bodies, messages, addresses).
ID_CHARACTERS = "[A-Za-z0-9_.-]"
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.\-]+")


@dataclass(frozen=True, slots=True)
class Hint:
    """One hint: ``code``, ``message`` (the whole sentence), ``beside`` (the sentence as the
    field it is about says it), the ``node`` and ``field`` it is about (``over``, ``on``,
    ``case``, ``stop_when``, ``best_by``, ``input.<key>``, ``id``, or ``""``), the ``case``
    index for a case's condition, ``path`` read, and for an edge listed twice the ``edge``
    index of the second one in its level's list."""

    code: str
    message: str
    beside: str
    level: SubgraphPath = ()
    node: str | None = None
    field: str = ""
    case: int | None = None
    path: str = ""
    edge: int | None = None


#: Where what flows in is described, in words, or how to say it (said only for a hint).
Words = str | Callable[[], str]


def _said(words: Words) -> str:
    return words if isinstance(words, str) else words()


def _prefix(level: SubgraphPath) -> str:
    return "".join(f"in the subgraph of `{owner}`: " for owner in level)


def document_hints(graph: Graph, flow: DataFlow | None = None) -> list[Hint]:
    """Every hint of ``graph``: the top level first, then each subgraph body depth first, each
    level's nodes in document order, then its edges."""
    flow = flow if flow is not None else DataFlow(graph)
    found: list[Hint] = []
    for level, current in flow.levels():
        for node in current.nodes:
            found.extend(node_hints(flow, level, node))
        found.extend(_duplicate_edges(current, level))
    return found


def node_hints(flow: DataFlow, level: SubgraphPath, node: Node) -> Iterator[Hint]:
    """The hints about one node: its id, then its references in the order of its form."""
    yield from _id_hints(level, node)
    if flow.node(level, node.id) is not node:
        return  # an earlier node with a duplicated id: its references are not looked up
    if isinstance(node, MapNode):
        yield from _over(flow, level, node)
    elif isinstance(node, BranchNode):
        yield from _branch(flow, level, node)
    elif isinstance(node, FoldNode) and isinstance(node.body, SubgraphBody):
        # A node body with an output schema is check 9's (an error); a subgraph body's output
        # is what its last node gives, which the walk can read as a hint.
        yield from _fold(flow, level, node)
    elif isinstance(node, ToolNode):
        for key in sorted(node.input):
            yield from _reference(flow, level, node, f"input.{key}", node.input[key])


# --- References ---------------------------------------------------------------------------------


def _what_flows_in(flow: DataFlow, level: SubgraphPath, inflows: tuple[Inflow, ...]) -> str:
    """Where what a node receives is described, in words."""
    words = [_inflow_words(flow, level, inflow) for inflow in inflows]
    words = list(dict.fromkeys(words))
    if len(words) == 1:
        return words[0]
    return "any of " + ", ".join(words[:-1]) + " or " + words[-1]


def _inflow_words(flow: DataFlow, level: SubgraphPath, inflow: Inflow) -> str:
    source = inflow.source
    if inflow.origin == "input":
        return "the run's input schema"
    if inflow.origin == "item":
        return f"an item of `{source}`'s list"
    if inflow.origin == "pass":
        return f"what `{source}` receives"
    if inflow.origin == "previous":
        return f"what a pass of `{source}` gives"
    node = flow.node(level, source) if source is not None else None
    kind = node.kind if node is not None else ""
    if kind in ("agent", "tool"):
        return f"the output schema of `{source}`"
    if kind == "gate":
        return f"the approval schema of `{source}`"
    if kind in ("branch", "delay"):
        return f"what `{source}` passes on"
    return f"what `{source}` gives"


def _refusal(
    flow: DataFlow,
    level: SubgraphPath,
    node: Node,
    field: str,
    words: str,
    segments: tuple[Segment, ...],
    shape: Shape,
    described_by: Words,
    case: int | None = None,
) -> Hint | None:
    outcome, _there = shape_at(shape, segments)
    if outcome is not False:
        return None
    path = ".".join(str(segment) for segment in segments)
    beside = f"{words} reads `{path}`, which {_said(described_by)} does not describe"
    return Hint(
        "reference_not_described",
        f"{_prefix(level)}{node.kind} node `{node.id}`: {beside}",
        beside[0].upper() + beside[1:],
        level,
        node.id,
        field,
        case,
        path,
    )


def _segments(text: str | None) -> tuple[Segment, ...] | None:
    if text is None:
        return None
    try:
        return parse_reference(text).segments
    except ExpressionError:
        return None  # E5 (or check 8) reported it


def _reference(
    flow: DataFlow, level: SubgraphPath, node: Node, field: str, text: str | None
) -> Iterator[Hint]:
    segments = _segments(text)
    if segments is None:
        return
    hint = _refusal(
        flow,
        level,
        node,
        field,
        _field_words(field),
        segments,
        flow.received(level, node.id),
        lambda: _what_flows_in(flow, level, flow.receives(level, node.id)),
    )
    if hint is not None:
        yield hint


def _field_words(field: str) -> str:
    if field.startswith("input."):
        return f"input `{field[len('input.') :]}`"
    if field == "best_by":
        return "the `best_by` join reference"
    return f"`{field}`"


def _type_words(schema: Any) -> str | None:
    declared = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list) and declared and all(isinstance(t, str) for t in declared):
        return " or ".join(declared)
    return None


_ARTICLES = {"array": "an array", "object": "an object", "integer": "an integer"}


def _over(flow: DataFlow, level: SubgraphPath, node: MapNode) -> Iterator[Hint]:
    refused = list(_reference(flow, level, node, "over", node.over))
    if refused:
        yield from refused
        return
    segments = _segments(node.over)
    if segments is None:
        return
    outcome, there = shape_at(flow.received(level, node.id), segments)
    if not outcome or not there:
        return
    kinds = [_type_words(schema) for schema in there]
    if any(kind is None or "array" in kind.split(" or ") for kind in kinds):
        return
    said = " or ".join(_ARTICLES.get(kind or "", f"a {kind}") for kind in dict.fromkeys(kinds))
    described_by = _what_flows_in(flow, level, flow.receives(level, node.id))
    beside = f"`over` reads `{node.over}`, which {described_by} describes as {said}, not a list"
    yield Hint(
        "reference_not_a_list",
        f"{_prefix(level)}map node `{node.id}`: {beside}",
        beside[0].upper() + beside[1:],
        level,
        node.id,
        "over",
        None,
        node.over,
    )


def _branch(flow: DataFlow, level: SubgraphPath, node: BranchNode) -> Iterator[Hint]:
    yield from _reference(flow, level, node, "on", node.on)
    received = flow.received(level, node.id)

    def described_by() -> str:
        words = _what_flows_in(flow, level, flow.receives(level, node.id))
        return words if node.on is None else f"what {words} describes at `{node.on}`"

    shape: Shape = received
    if node.on is not None:
        on = _segments(node.on)
        if on is None:
            return
        outcome, shape = shape_at(received, on)
        if not outcome:
            return  # `on` itself is hinted, or nothing is known there
    for index, case in enumerate(node.cases):
        if not isinstance(case.when, ExpressionCondition):
            continue
        yield from _condition(
            flow,
            level,
            node,
            "case",
            f"case `{case.name}`",
            case.when.expression,
            shape,
            described_by,
            index,
        )


def _condition(
    flow: DataFlow,
    level: SubgraphPath,
    node: Node,
    field: str,
    words: str,
    text: str,
    shape: Shape,
    described_by: Words,
    case: int | None = None,
) -> Iterator[Hint]:
    try:
        root = parse_expression(text).root
    except ExpressionError:
        return
    said: set[tuple[Segment, ...]] = set()
    for segments in condition_paths(root):
        if segments in said:
            continue
        said.add(segments)
        hint = _refusal(flow, level, node, field, words, segments, shape, described_by, case)
        if hint is not None:
            yield hint


def _fold(flow: DataFlow, level: SubgraphPath, node: FoldNode) -> Iterator[Hint]:
    passes = flow.body_output(level, node)
    described_by = f"what a pass of `{node.id}` gives"
    yield from _condition(
        flow, level, node, "stop_when", "`stop_when`", node.stop_when, passes, described_by
    )
    if isinstance(node.join, BestBy):
        segments = _segments(node.join.reference)
        if segments is None:
            return
        hint = _refusal(
            flow, level, node, "best_by", _field_words("best_by"), segments, passes, described_by
        )
        if hint is not None:
            yield hint


# --- Ids and edges -------------------------------------------------------------------------------


def _character(char: str) -> str:
    if char == " ":
        return "a space"
    if char.isspace() or unicodedata.category(char).startswith("C"):
        return f"U+{ord(char):04X}"
    return f"`{char}`"


def _id_hints(level: SubgraphPath, node: Node) -> Iterator[Hint]:
    if node.id == "":
        beside = "The id is empty: give the node an id, so that edges can name it"
        yield Hint(
            "node_id_empty",
            f"{_prefix(level)}a {node.kind} node has an empty id: give it one, so that edges "
            "can name it",
            beside,
            level,
            node.id,
            "id",
        )
        return
    if _PLAIN_ID.fullmatch(node.id):
        return
    odd = [char for char in dict.fromkeys(node.id) if not _PLAIN_ID.fullmatch(char)]
    shown = ", ".join(_character(char) for char in odd[:5]) + (", …" if len(odd) > 5 else "")
    beside = (
        f"The id has characters other than letters, digits, `_`, `.` and `-` ({shown}): "
        "easy to mistype in an edge, and hard to read in a message"
    )
    yield Hint(
        "node_id_characters",
        f"{_prefix(level)}node `{node.id}`: {beside[0].lower()}{beside[1:]}",
        beside,
        level,
        node.id,
        "id",
    )


def _duplicate_edges(graph: Graph, level: SubgraphPath) -> Iterator[Hint]:
    seen: set[tuple[str, str, str | None]] = set()
    for index, edge in enumerate(graph.edges):
        key = (edge.source, edge.target, edge.label)
        if key not in seen:
            seen.add(key)
            continue
        case = f" for case `{edge.label}`" if edge.label is not None else ""
        sentence = (
            f"edge `{edge.source}` -> `{edge.target}`{case} is listed twice: the second adds "
            "nothing, remove it"
        )
        yield Hint(
            "duplicate_edge",
            f"{_prefix(level)}{sentence}",
            sentence[0].upper() + sentence[1:],
            level,
            edge.source,
            "",
            None,
            "",
            index,
        )
