"""DOT source for the canvas (spec 06, *Editor*): pure text, drawn by ``dot`` elsewhere.

Each node shows its display name (its id when it has none) and its kind, in a
shape of its own; branch edges carry their labels; entry nodes are drawn bold
and marked ``▶``, terminal nodes with a double border; nodes and edges with
errors are red **and** dashed, with ``⚠`` in the label; in the editor, a node with a
field held back (typed, not saved) is drawn dotted and bold, with ``✎`` before its name and
*not saved* after its kind. On a run's page each
node reached is filled by its state (:data:`RUN_STATES`) and says the state in
words too (:class:`RunMarks`: at every level, body nodes and subgraphs included, with
a note such as how many items ran); the edges the run walked are drawn bold and
thick. A map's or fold's body node hangs beside its owner on a dashed ``body``
edge; an embedded subgraph is drawn as a cluster.

Every user string goes through :func:`graphviz.escape`, so a name such as
``<b>x</b>`` is text, never an HTML-like label, and backslashes are literal.
DOT identifiers are generated (``n0``, ``n1`` …), never taken from user text.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

import graphviz

from editor.graph.durations import format_duration
from editor.graph.model import (
    DelayNode,
    FoldNode,
    Graph,
    MapNode,
    Node,
    NodeBody,
    SubgraphBody,
    SubgraphPath,
)

__all__ = [
    "KIND_SHAPES",
    "RUN_STATES",
    "Drawing",
    "DrawnItem",
    "Pins",
    "Problems",
    "RunMarks",
    "dot_source",
    "drawing",
    "structure_key",
]

#: Kind → (shape, extra style). Distinct by outline, not by colour alone.
KIND_SHAPES: dict[str, tuple[str, str]] = {
    "agent": ("box", "rounded"),
    "tool": ("component", ""),
    "gate": ("octagon", ""),
    "branch": ("diamond", ""),
    "map": ("box3d", ""),
    "fold": ("hexagon", ""),
    "delay": ("ellipse", ""),
}
ERROR_COLOUR = "#c62828"
#: A node with a field held back: told apart from an error by its dotted outline and its words.
HELD_COLOUR = "#8a4b00"
BODY_COLOUR = "#6b7280"

#: A node's state in a run → (mark before its name, fill, extra style, outline colour or "").
#: The state is also written under the name, so colour is never the only sign.
RUN_STATES: dict[str, tuple[str, str, str, str]] = {
    "running": ("● ", "#dbeafe", "bold", "#1d4ed8"),
    "done": ("✓ ", "#dcfce7", "", ""),
    "skipped": ("– ", "#f3f4f6", "dotted", BODY_COLOUR),
    "waiting": ("‖ ", "#fef3c7", "bold", "#b45309"),
    "failed": ("✗ ", "#fee2e2", "bold", ERROR_COLOUR),
    "stopped": ("■ ", "#e5e7eb", "", BODY_COLOUR),
}
#: An edge the run walked: thicker, bold, in the accent colour (width tells it apart too).
WALKED_COLOUR = "#1d4ed8"


@dataclass(frozen=True)
class RunMarks:
    """A run drawn on its graph: each reached node's state (a key of :data:`RUN_STATES`) and
    an optional note (``×3``, ``case approved``) by ``(level, id)``, and the edges walked as
    ``(level, source, target, label)``."""

    states: dict[tuple[SubgraphPath, str], str] = field(default_factory=dict)
    notes: dict[tuple[SubgraphPath, str], str] = field(default_factory=dict)
    walked: frozenset[tuple[SubgraphPath, str, str, str | None]] = frozenset()


@dataclass
class Pins:
    """Where a laid-out drawing put things, to draw a drawing of the same structure at the same
    places (``neato -n2``): positions by the generated DOT ids (``n1``…, ``e1``…,
    ``cluster_n3``), which a drawing of the same :func:`structure_key` shares.

    ``nodes`` holds each node's position and the label it had when laid out: an edge touching
    a node whose label changed (so whose size may have) is routed again, straight, rather than
    drawn along a curve that no longer meets it.
    """

    bb: str
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)
    edges: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    clusters: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class DrawnItem:
    """One node, edge or cluster of a drawing: the ``element`` id of its SVG group, the DOT
    statement it is drawn from, and for an edge the DOT ids of its ``ends`` (an edge routed
    again depends on their shapes). A ``whole`` item (a cluster, anything inside one, an edge
    into one) is drawn only with the whole drawing."""

    element: str
    statement: str
    name: str = ""
    ends: tuple[str, ...] = ()
    whole: bool = False


class Drawing(NamedTuple):
    """A drawing's DOT ``source``; each node's label by DOT id (kept with a layout); the
    ``header`` (the graph's opening line and default attributes) and the ``items`` the source
    states after it, so a pinned drawing can be drawn piece by piece (``editor.pieces``)."""

    source: str
    labels: dict[str, str]
    header: str
    items: tuple[DrawnItem, ...]


@dataclass
class Problems:
    """Which nodes and edges the errors of spec 02 are about, per document level."""

    nodes: set[tuple[SubgraphPath, str]] = field(default_factory=set)
    edges: set[tuple[SubgraphPath, str, str]] = field(default_factory=set)

    @classmethod
    def from_errors(cls, errors: Iterable[dict[str, Any]]) -> Problems:
        problems = cls()
        for error in errors:
            level: SubgraphPath = tuple(error.get("subgraph", ()))
            if level:
                # The owner at the top carries the mark too, so a problem deep inside
                # a subgraph is visible when the cluster is not drawn.
                problems.nodes.add(((), level[0]))
            edge = error.get("edge")
            if isinstance(edge, dict):
                problems.edges.add((level, edge["from"], edge["to"]))
            elif "node" in error and "to" in error:
                problems.edges.add((level, error["node"], error["to"]))
            if "node" in error:
                problems.nodes.add((level, error["node"]))
            if "owner" in error:
                problems.nodes.add((level, error["owner"]))
            if error.get("code") == "cycle":
                steps = error["path"].split(" -> ")
                for source, target in itertools.pairwise(steps):
                    problems.edges.add((level, source, target))
        return problems


def _label(
    node: Node,
    *,
    entry: bool,
    broken: bool,
    state: str | None = None,
    mark: str = "",
    note: str | None = None,
    held: bool = False,
) -> str:
    """Two lines: marks and the display name (or id), then the kind (and the run state).

    The user's text is escaped on its own and joined with DOT's ``\\n`` line
    break, which escaping would otherwise double; ``nohtml`` keeps the whole
    label a plain string whatever it starts and ends with.
    """
    title = node.name if node.name is not None and node.name.strip() else node.id
    marks = mark + ("⚠ " if broken else "") + ("✎ " if held else "") + ("▶ " if entry else "")
    kind: str = node.kind
    if isinstance(node, DelayNode):
        kind = f"delay · {format_duration(node.seconds)}"  # the wait, as a person reads it
    second: str = kind
    if held:
        second = f"{kind} · not saved"
    if state is not None:
        marks = RUN_STATES[state][0] + marks
        second = f"{kind} · {state}"
        if note:
            second = f"{second} · {note}"
    return graphviz.nohtml(f"{graphviz.escape(marks + title)}\\n{graphviz.escape(second)}")


def _key(attributes: dict[str, str]) -> tuple[tuple[str, str, bool], ...]:
    return tuple((name, str(value), type(value) is not str) for name, value in attributes.items())


def _unkey(key: tuple[tuple[str, str, bool], ...]) -> dict[str, str]:
    return {name: graphviz.nohtml(value) if marked else value for name, value, marked in key}


# The quoting of the graphviz package costs most of a drawing's DOT source; a node or edge
# drawn again as it was (most of them, after an edit) takes its line from here. The lines are
# the package's own, made once per distinct node or edge.
@lru_cache(maxsize=20_000)
def _node_line(
    dot_id: str, no_html: bool, label: str, key: tuple[tuple[str, str, bool], ...]
) -> str:
    scratch = graphviz.Digraph()
    scratch.node(dot_id, graphviz.nohtml(label) if no_html else label, **_unkey(key))
    line: str = scratch.body[0]
    return line


@lru_cache(maxsize=20_000)
def _edge_line(tail: str, head: str, key: tuple[tuple[str, str, bool], ...]) -> str:
    scratch = graphviz.Digraph()
    scratch.edge(tail, head, **_unkey(key))
    line: str = scratch.body[0]
    return line


class _Writer:
    def __init__(
        self,
        problems: Problems,
        node_url: Callable[[SubgraphPath, str], str | None] | None,
        highlight: dict[tuple[SubgraphPath, str], str],
        states: dict[str, str] | None = None,
        marks: RunMarks | None = None,
    ) -> None:
        self.problems = problems
        self.node_url = node_url
        self.highlight = highlight
        if marks is None:
            # Top-level states alone (the projection lists those).
            marks = RunMarks(states={((), node): state for node, state in (states or {}).items()})
        self.marks = marks
        self.counter = 0
        self.edge_counter = 0
        #: Every node, edge and cluster written, and how deep in clusters the writer is.
        self.items: list[DrawnItem] = []
        self.depth = 0
        self.pins: Pins | None = None
        #: The label of each node, by DOT id (kept with a layout, see :class:`Pins`).
        self.labels: dict[str, str] = {}
        self.relabelled: set[str] = set()
        #: Compare: a sign before a node's name ("+ ", "~ ", "− "), nodes drawn as ghosts
        #: (removed: grey and dashed), and edges' signs and colours by (source, target, label).
        self.signs: dict[tuple[SubgraphPath, str], str] = {}
        self.ghosts: set[tuple[SubgraphPath, str]] = set()
        self.edge_marks: dict[tuple[str, str, str | None], tuple[str, str]] = {}
        #: The editor: nodes with a field held back, by ``(level, id)``.
        self.held: set[tuple[SubgraphPath, str]] = set()

    def new_id(self) -> str:
        self.counter += 1
        return f"n{self.counter}"

    def node(self, dot: graphviz.Digraph, dot_id: str, label: str, **attributes: str) -> None:
        self.labels[dot_id] = str(label)
        if self.pins is not None:
            pinned = self.pins.nodes.get(dot_id)
            if pinned is not None:
                attributes["pos"] = pinned[0]
                if pinned[1] != str(label):
                    self.relabelled.add(dot_id)
        line = _node_line(dot_id, type(label) is not str, str(label), _key(attributes))
        dot.body.append(line)
        self.items.append(DrawnItem(f"node-{dot_id}", line, dot_id, whole=self.depth > 0))

    def edge(self, dot: graphviz.Digraph, tail: str, head: str, **attributes: str) -> None:
        self.edge_counter += 1
        edge_id = f"e{self.edge_counter}"
        attributes["id"] = f"edge-{edge_id}"
        if self.pins is not None and not {tail, head} & self.relabelled:
            pos, label_pos = self.pins.edges.get(edge_id, (None, None))
            if pos:
                attributes["pos"] = pos
            if label_pos:
                attributes["lp"] = label_pos
        line = _edge_line(tail, head, _key(attributes))
        dot.body.append(line)
        whole = self.depth > 0 or "lhead" in attributes
        self.items.append(DrawnItem(f"edge-{edge_id}", line, edge_id, (tail, head), whole))

    def level(self, dot: graphviz.Digraph, graph: Graph, level: SubgraphPath) -> dict[str, str]:
        """Draw one document level into ``dot``; returns node id → DOT id."""
        bodies = {
            node.body.node
            for node in graph.nodes
            if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
        }
        inbound = {edge.target for edge in graph.edges}
        outbound = {edge.source for edge in graph.edges}
        ids: dict[str, str] = {}
        for node in graph.nodes:
            ids[node.id] = dot_id = self.new_id()
            broken = (level, node.id) in self.problems.nodes
            held = (level, node.id) in self.held
            is_body = node.id in bodies
            entry = not is_body and node.id not in inbound
            terminal = not is_body and node.id not in outbound
            shape, style = KIND_SHAPES[node.kind]
            styles = [
                part
                for part in (style, "dashed" if broken else "", "bold" if entry else "")
                if part
            ]
            attributes = {
                "shape": shape,
                "tooltip": graphviz.escape(f"{node.kind} node {node.id}"),
                "id": f"node-{dot_id}",
            }
            if not level:
                # The editor marks the node whose form is open; body nodes inside a
                # subgraph link to their owner's form, so only top-level ones are marked.
                attributes["class"] = "top-level"
            if styles:
                attributes["style"] = ",".join(styles)
            if terminal:
                attributes["peripheries"] = "2"
            if held:
                attributes["class"] = f"{attributes.get('class', '')} held".strip()
                if not broken:  # an error's red and dashes win; the words say both
                    styles = list(dict.fromkeys([*styles, "dotted", "bold"]))
                    attributes["style"] = ",".join(styles)
                    attributes["color"] = HELD_COLOUR
                    attributes["fontcolor"] = HELD_COLOUR
            if broken:
                attributes["color"] = ERROR_COLOUR
                attributes["fontcolor"] = ERROR_COLOUR
            fill = self.highlight.get((level, node.id))
            if fill:
                attributes["style"] = ",".join([*styles, "filled"])
                attributes["fillcolor"] = fill
            state = self.marks.states.get((level, node.id))
            if state is not None:
                _, state_fill, state_style, outline = RUN_STATES[state]
                attributes["style"] = ",".join(
                    dict.fromkeys(part for part in (*styles, state_style, "filled") if part)
                )
                attributes["fillcolor"] = state_fill
                attributes["class"] = f"{attributes.get('class', '')} run-{state}".strip()
                if outline and not broken:
                    attributes["color"] = outline
            url = self.node_url(level, node.id) if self.node_url else None
            if url:
                attributes["URL"] = graphviz.escape(url)
                attributes["target"] = "_top"
            mark = self.signs.get((level, node.id), "")
            if (level, node.id) in self.ghosts:
                attributes["style"] = ",".join(dict.fromkeys([*styles, "dashed"]))
                attributes["color"] = attributes["fontcolor"] = BODY_COLOUR
            note = self.marks.notes.get((level, node.id)) if state is not None else None
            label = _label(
                node, entry=entry, broken=broken, state=state, mark=mark, note=note, held=held
            )
            self.node(dot, dot_id, label, **attributes)
        for edge in graph.edges:
            if edge.source not in ids or edge.target not in ids:
                continue
            attributes = {}
            if edge.label is not None:
                attributes["label"] = graphviz.escape(edge.label)
            if (level, edge.source, edge.target, edge.label) in self.marks.walked:
                attributes.update(
                    color=WALKED_COLOUR, fontcolor=WALKED_COLOUR, style="bold", penwidth="2.5"
                )
                attributes["class"] = "walked"
                attributes["tooltip"] = "the run went this way"
            if (level, edge.source, edge.target) in self.problems.edges:
                attributes.update(color=ERROR_COLOUR, fontcolor=ERROR_COLOUR, style="dashed")
            marked = (
                self.edge_marks.get((edge.source, edge.target, edge.label)) if not level else None
            )
            if marked is not None:
                sign, colour = marked
                attributes["label"] = graphviz.escape(sign + (edge.label or ""))
                attributes.update(color=colour, fontcolor=colour)
                if sign.startswith("−"):
                    attributes["style"] = "dashed"
            self.edge(dot, ids[edge.source], ids[edge.target], **attributes)
        for node in graph.nodes:
            body = getattr(node, "body", None)
            if isinstance(body, NodeBody) and body.node in ids:
                self.edge(
                    dot,
                    ids[node.id],
                    ids[body.node],
                    label="body",
                    style="dashed",
                    color=BODY_COLOUR,
                    fontcolor=BODY_COLOUR,
                    arrowhead="none",
                )
            elif isinstance(body, SubgraphBody):
                self.cluster(dot, node, body.graph, (*level, node.id), ids[node.id])
        return ids

    def cluster(
        self, dot: graphviz.Digraph, owner: Node, graph: Graph, level: SubgraphPath, owner_id: str
    ) -> None:
        name = f"cluster_{self.new_id()}"
        with dot.subgraph(name=name) as cluster:
            pinned: dict[str, str] = {}
            if self.pins is not None:
                box, label_pos = self.pins.clusters.get(name, (None, None))
                pinned = {key: value for key, value in (("bb", box), ("lp", label_pos)) if value}
            label = graphviz.escape(f"body of {owner.id}")
            cluster.attr(
                id=name,
                label=label,
                style="dashed",
                color=BODY_COLOUR,
                fontcolor=BODY_COLOUR,
                **pinned,
            )
            self.items.append(DrawnItem(name, f"{name} {label} {pinned}", name, whole=True))
            self.depth += 1
            inner = self.level(cluster, graph, level)
            self.depth -= 1
        targets = [inner[node.id] for node in graph.nodes if node.id in inner]
        if targets:
            self.edge(
                dot,
                owner_id,
                targets[0],
                lhead=name,
                label="body",
                style="dashed",
                color=BODY_COLOUR,
                fontcolor=BODY_COLOUR,
                arrowhead="none",
            )


def dot_source(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[SubgraphPath, str], str | None] | None = None,
    highlight: dict[tuple[SubgraphPath, str], str] | None = None,
    states: dict[str, str] | None = None,
    pins: Pins | None = None,
    marks: RunMarks | None = None,
) -> str:
    """The DOT source of ``graph`` with ``errors`` marked.

    ``node_url(level, id)`` gives each node's link (``level`` is the chain of
    subgraph owners, empty at the top); ``highlight`` fills chosen nodes with a
    colour (the compare view uses it); ``states`` maps top-level node ids to a
    key of :data:`RUN_STATES`, and ``marks`` (which wins) draws a run at every
    level with the edges it walked (the run page uses it). With ``pins`` (a layout of a
    drawing of the same :func:`structure_key`), every node and edge carries its position, for
    ``neato -n2`` to draw without laying out again.
    """
    return drawing(
        graph,
        errors=errors,
        node_url=node_url,
        highlight=highlight,
        states=states,
        pins=pins,
        marks=marks,
    ).source


def drawing(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[SubgraphPath, str], str | None] | None = None,
    highlight: dict[tuple[SubgraphPath, str], str] | None = None,
    states: dict[str, str] | None = None,
    pins: Pins | None = None,
    marks: RunMarks | None = None,
    signs: dict[tuple[SubgraphPath, str], str] | None = None,
    ghosts: set[tuple[SubgraphPath, str]] | None = None,
    edge_marks: dict[tuple[str, str, str | None], tuple[str, str]] | None = None,
    held: Iterable[tuple[SubgraphPath, str]] = (),
) -> Drawing:
    """:func:`dot_source`, with the label of each node by DOT id (kept with a layout) and the
    items the source is made of (:class:`Drawing`).

    A pinned drawing (``pins``) is not moved to the origin (``notranslate``): every item keeps
    the coordinates its layout gave it, so an item drawn again alone comes out as it would in
    the whole drawing, and the page can put just the items an edit changed in place.

    For Compare: ``signs`` puts a sign before chosen nodes' names, ``ghosts`` draws nodes grey
    and dashed (removed ones), ``edge_marks`` signs and colours top-level edges by
    ``(source, target, label)`` (a sign starting with ``−`` also dashes the edge).

    For the editor: ``held`` names the nodes, by ``(level, id)``, with a field held back (a
    node inside a subgraph marks its top-level owner too, as an error does)."""
    dot = graphviz.Digraph(
        "graph",
        graph_attr={
            "rankdir": "LR",
            "compound": "true",
            "fontname": "sans-serif",
            "bgcolor": "transparent",
            "nodesep": "0.35",
            "ranksep": "0.5",
        },
        node_attr={"fontname": "sans-serif", "fontsize": "11", "margin": "0.15,0.06"},
        edge_attr={"fontname": "sans-serif", "fontsize": "10"},
    )
    if pins is not None:
        dot.graph_attr["bb"] = pins.bb
        dot.graph_attr["notranslate"] = "true"
    writer = _Writer(Problems.from_errors(errors), node_url, highlight or {}, states, marks)
    writer.pins = pins
    writer.signs = signs or {}
    writer.ghosts = ghosts or set()
    writer.edge_marks = edge_marks or {}
    for level, node_id in held:
        writer.held.add((level, node_id))
        if level:
            writer.held.add(((), level[0]))
    writer.level(dot, graph, ())
    lines = list(dot)
    header = "".join(lines[: len(lines) - len(dot.body) - 1])
    return Drawing("".join(lines), writer.labels, header, tuple(writer.items))


def structure_key(graph: Graph) -> str:
    """Names what a layout depends on: per document level, the kinds of the nodes in order,
    the edges and bodies between them by position, and the subgraphs. Two graphs with equal
    keys get the same DOT ids, so a layout of one places the other (names, labels, prompts,
    schemas and errors may differ)."""
    parts: list[Any] = []

    def level(current: Graph) -> None:
        where = {node.id: index for index, node in enumerate(current.nodes)}
        parts.append(tuple(node.kind for node in current.nodes))
        parts.append(
            tuple(
                (where[edge.source], where[edge.target])
                for edge in current.edges
                if edge.source in where and edge.target in where
            )
        )
        for index, node in enumerate(current.nodes):
            body = getattr(node, "body", None)
            if isinstance(body, NodeBody):
                parts.append(("body", index, where.get(body.node)))
            elif isinstance(body, SubgraphBody):
                parts.append(("subgraph", index))
                level(body.graph)
                parts.append(("end", index))

    level(graph)
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:32]
