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
from dataclasses import dataclass
from typing import Any

from editor.graph import Graph
from editor.graph.dot import RunMarks, dot_source
from editor.graph.model import graph_size
from editor.rendering import Canvas, render_svg

__all__ = ["CanvasSource", "DrawnCanvas", "canvas_source", "draw", "render"]


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


@dataclass(frozen=True)
class CanvasSource:
    """A drawing not laid out yet: its DOT source, its size and its key."""

    source: str
    nodes: int
    edges: int
    key: str


def canvas_source(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[tuple[str, ...], str], str | None] | None = None,
    highlight: dict[tuple[tuple[str, ...], str], str] | None = None,
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


def draw(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[tuple[str, ...], str], str | None] | None = None,
    highlight: dict[tuple[tuple[str, ...], str], str] | None = None,
    states: dict[str, str] | None = None,
    marks: RunMarks | None = None,
) -> DrawnCanvas:
    """Draw ``graph`` with ``errors`` marked; nodes link where ``node_url`` says."""
    return render(
        canvas_source(
            graph,
            errors=errors,
            node_url=node_url,
            highlight=highlight,
            states=states,
            marks=marks,
        )
    )
