"""Canvases: a graph drawn by Graphviz, with its errors marked and its nodes linked.

Views call :func:`draw` and include ``templates/canvas/_canvas.html`` with the
result. The DOT source is built by the pure :mod:`editor.graph.dot`; the SVG
comes from :mod:`editor.rendering` (time limit, drawing cap, cache by content).
The editor splits the two steps (:func:`canvas_source`, then :func:`render`): the
source's key tells it whether the page already shows this drawing, in which case
it neither lays it out nor sends it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from editor.graph import Graph
from editor.graph.dot import DrawnItem, Pins, RunMarks, dot_source, drawing, structure_key
from editor.graph.model import SubgraphPath, graph_size
from editor.rendering import Canvas, lay_out, render_svg

__all__ = [
    "CanvasSource",
    "DrawnCanvas",
    "canvas_source",
    "draw",
    "draw_compared",
    "editor_source",
    "render",
    "render_editor",
]


@dataclass(frozen=True)
class DrawnCanvas:
    """What ``_canvas.html`` shows: the SVG, or the reason there is none.

    ``key`` names the drawing (a digest of its DOT source): equal keys, equal drawings.
    """

    svg: str | None
    problem: str | None
    nodes: int
    edges: int
    key: str = ""
    #: The structure the drawing shows (editor canvases): the page keeps its view on a redraw
    #: of the same structure.
    structure: str = ""


@dataclass(frozen=True)
class CanvasSource:
    """A drawing not laid out yet: its DOT source, its size and its key.

    An editor drawing also says whether its source is ``pinned`` (placed by a kept layout) and
    carries its ``structure`` key and node labels, which a new layout is kept with.
    """

    source: str
    nodes: int
    edges: int
    key: str
    pinned: bool = False
    structure: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    #: The drawing's header and items (``editor.graph.dot.Drawing``), for a pinned source.
    header: str = ""
    items: tuple[DrawnItem, ...] = ()


def canvas_source(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[SubgraphPath, str], str | None] | None = None,
    highlight: dict[tuple[SubgraphPath, str], str] | None = None,
    states: dict[str, str] | None = None,
    marks: RunMarks | None = None,
) -> CanvasSource:
    """The DOT source of ``graph`` with ``errors`` marked; nodes link where ``node_url`` says;
    ``states`` colours and labels top-level nodes by their state in a run, ``marks`` every
    node a run reached and the edges it walked."""
    nodes, edges = graph_size(graph)
    source = dot_source(
        graph, errors=errors, node_url=node_url, highlight=highlight, states=states, marks=marks
    )
    key = hashlib.sha256(source.encode("utf-8")).hexdigest()[:32]
    return CanvasSource(source, nodes, edges, key)


def render(source: CanvasSource) -> DrawnCanvas:
    """Lay ``source`` out (or take it from the cache)."""
    canvas: Canvas = render_svg(source.source, nodes=source.nodes, edges=source.edges)
    # A canvas not drawn because dot was busy has no key: the page asks for it again.
    key = "" if canvas.busy else source.key
    return DrawnCanvas(canvas.svg, canvas.problem, source.nodes, source.edges, key)


class CanvasOptions(TypedDict, total=False):
    """What :func:`canvas_source` marks on a drawing, for :func:`draw`."""

    errors: Iterable[dict[str, Any]]
    node_url: Callable[[SubgraphPath, str], str | None] | None
    highlight: dict[tuple[SubgraphPath, str], str] | None
    states: dict[str, str] | None
    marks: RunMarks | None


def draw(graph: Graph, **options: Unpack[CanvasOptions]) -> DrawnCanvas:
    """Draw ``graph`` with ``errors`` marked; nodes link where ``node_url`` says."""
    return render(canvas_source(graph, **options))


# --- The editor's canvas: a layout kept while the structure stays ------------------------------


def _key(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:32]


def _pins(layout: dict[str, Any]) -> Pins:
    return Pins(
        bb=str(layout.get("bb", "")),
        nodes={name: (pos, label) for name, (pos, label) in layout.get("nodes", {}).items()},
        edges={name: (pos, lp) for name, (pos, lp) in layout.get("edges", {}).items()},
        clusters={name: (bb, lp) for name, (bb, lp) in layout.get("clusters", {}).items()},
    )


def editor_source(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[SubgraphPath, str], str | None] | None = None,
    layout: dict[str, Any] | None = None,
    held: Iterable[tuple[SubgraphPath, str]] = (),
) -> CanvasSource:
    """The editor's drawing of ``graph``: placed by ``layout`` when it was made for a graph of
    the same structure (so nodes keep their places after an edit of names, labels, prompts or
    schemas), else a source to lay out afresh; ``held`` marks the nodes with a field held back
    by ``(level, id)``."""
    nodes, edges = graph_size(graph)
    structure = structure_key(graph)
    pins = _pins(layout) if layout and layout.get("structure") == structure else None
    held = tuple(held)
    drawn = drawing(graph, errors=errors, node_url=node_url, pins=pins, held=held)
    return CanvasSource(
        drawn.source,
        nodes,
        edges,
        _key(drawn.source),
        pinned=pins is not None,
        structure=structure,
        labels=drawn.labels,
        header=drawn.header,
        items=drawn.items,
    )


def render_editor(
    source: CanvasSource,
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[SubgraphPath, str], str | None] | None = None,
    held: Iterable[tuple[SubgraphPath, str]] = (),
) -> tuple[DrawnCanvas, dict[str, Any] | None]:
    """Draw an :func:`editor_source`; a source not pinned is laid out by ``dot`` first, and
    that layout is returned to be kept (``None`` when nothing new was laid out)."""
    if source.pinned:
        return _render_pinned(source.source, source.header, source.items, source, source.key), None
    laid = lay_out(source.source, nodes=source.nodes, edges=source.edges)
    if isinstance(laid, str):
        return DrawnCanvas(None, laid, source.nodes, source.edges, source.key), None
    layout = {
        **laid,
        "structure": source.structure,
        "nodes": {
            name: [pos, source.labels.get(name, "")] for name, (pos, _) in laid["nodes"].items()
        },
    }
    pinned = drawing(graph, errors=errors, node_url=node_url, pins=_pins(layout), held=held)
    drawn = _render_pinned(pinned.source, pinned.header, pinned.items, source, _key(pinned.source))
    return drawn, layout


def _render_pinned(
    text: str, header: str, items: tuple[Any, ...], source: CanvasSource, key: str
) -> DrawnCanvas:
    """Draw DOT ``text`` whose every position is given (``neato -n2``), piece by piece."""
    canvas = render_svg(
        text, nodes=source.nodes, edges=source.edges, pinned=True, items=(header, items)
    )
    return DrawnCanvas(
        canvas.svg, canvas.problem, source.nodes, source.edges, key, source.structure
    )


def draw_compared(
    graph: Graph,
    *,
    highlight: dict[tuple[SubgraphPath, str], str],
    signs: dict[tuple[SubgraphPath, str], str],
    ghosts: set[tuple[SubgraphPath, str]],
    edge_marks: dict[tuple[str, str, str | None], tuple[str, str]],
) -> DrawnCanvas:
    """Compare's canvas: ``graph`` (the newer side with the removed nodes and edges added),
    filled, signed and with ghosts as :func:`editor.graph.dot.drawing` describes."""
    nodes, edges = graph_size(graph)
    source = drawing(
        graph, highlight=highlight, signs=signs, ghosts=ghosts, edge_marks=edge_marks
    ).source
    return render(CanvasSource(source, nodes, edges, _key(source)))
