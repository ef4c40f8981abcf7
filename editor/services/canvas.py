"""Canvases: a graph drawn by Graphviz, with its errors marked and its nodes linked.

Views call :func:`draw` and include ``templates/canvas/_canvas.html`` with the
result. The DOT source is built by the pure :mod:`editor.graph.dot`; the SVG
comes from :mod:`editor.rendering` (time limit, drawing cap, cache by content).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from editor.graph import Graph
from editor.graph.dot import dot_source
from editor.graph.model import graph_size
from editor.rendering import Canvas, render_svg

__all__ = ["DrawnCanvas", "draw"]


@dataclass(frozen=True)
class DrawnCanvas:
    """What ``_canvas.html`` shows: the SVG, or the reason there is none."""

    svg: str | None
    problem: str | None
    nodes: int
    edges: int


def draw(
    graph: Graph,
    *,
    errors: Iterable[dict[str, Any]] = (),
    node_url: Callable[[tuple[str, ...], str], str | None] | None = None,
    highlight: dict[tuple[tuple[str, ...], str], str] | None = None,
) -> DrawnCanvas:
    """Draw ``graph`` with ``errors`` marked; nodes link where ``node_url`` says."""
    nodes, edges = graph_size(graph)
    source = dot_source(graph, errors=errors, node_url=node_url, highlight=highlight)
    canvas: Canvas = render_svg(source, nodes=nodes, edges=edges)
    return DrawnCanvas(canvas.svg, canvas.problem, nodes, edges)
