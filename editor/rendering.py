"""DOT source → SVG through the ``dot`` binary, with a time limit and a size cap.

``graphviz``'s own ``pipe()`` has no timeout, and a dense graph can keep ``dot``
busy for minutes, so ``dot`` runs under :func:`subprocess.run` with one. Graphs
over the drawing cap are not handed to ``dot`` at all. Renders are cached by
the SHA-256 of their DOT source in Django's cache, so a frozen version is laid
out once and an unchanged draft is never laid out twice.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches

__all__ = ["Canvas", "lay_out", "render_svg"]

TOO_LARGE = "This graph is too large to draw here"
_PROLOGUE = re.compile(r"\A(?:<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|\s)+", re.DOTALL)
_CACHE_PREFIX = "canvas:"


@dataclass(frozen=True)
class Canvas:
    """A rendered canvas: the SVG to inline, or why there is none."""

    svg: str | None
    problem: str | None = None

    @property
    def drawn(self) -> bool:
        return self.svg is not None


def _setting(name: str, default: float) -> float:
    return getattr(settings, name, default)


def _too_large(nodes: int, edges: int) -> str | None:
    max_nodes = int(_setting("GATEHOUSE_DRAW_MAX_NODES", 500))
    max_edges = int(_setting("GATEHOUSE_DRAW_MAX_EDGES", 2000))
    if nodes > max_nodes or edges > max_edges:
        return (
            f"{TOO_LARGE}: it has {nodes} nodes and {edges} edges, and the canvas draws "
            f"at most {max_nodes} nodes and {max_edges} edges."
        )
    return None


def _run(command: list[str], source: str) -> bytes | str:
    """What ``command`` prints for ``source``, or why there is nothing (a message)."""
    binary = shutil.which(command[0])
    if binary is None:
        return "Graphviz (the dot program) is not installed on this server."
    timeout = float(_setting("GATEHOUSE_GRAPHVIZ_TIMEOUT", 5.0))
    try:
        result = subprocess.run(
            [binary, *command[1:]],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{TOO_LARGE}: laying it out took longer than {timeout:g} s."
    if result.returncode != 0:
        return "Graphviz could not draw this graph."
    return result.stdout


def lay_out(source: str, *, nodes: int, edges: int) -> dict[str, Any] | str:
    """Where ``dot`` places everything in ``source``: ``{"bb", "nodes": {id: [pos, label]},
    "edges": {id: [pos, lp]}, "clusters": {name: [bb, lp]}}`` (edges by their ``id``
    attribute without its ``edge-`` prefix), or why it cannot (a message)."""
    problem = _too_large(nodes, edges)
    if problem is not None:
        return problem
    output = _run(["dot", "-Tjson0"], source)
    if isinstance(output, str):
        return output
    laid = json.loads(output)
    layout: dict[str, Any] = {"bb": laid.get("bb", ""), "nodes": {}, "edges": {}, "clusters": {}}
    for item in laid.get("objects", ()):
        if "nodes" in item or str(item.get("name", "")).startswith("cluster_"):
            layout["clusters"][item["name"]] = [item.get("bb"), item.get("lp")]
        elif "pos" in item:
            layout["nodes"][item["name"]] = [item["pos"], item.get("label", "")]
    for edge in laid.get("edges", ()):
        edge_id = str(edge.get("id", ""))
        if edge_id.startswith("edge-"):
            layout["edges"][edge_id.removeprefix("edge-")] = [edge.get("pos"), edge.get("lp")]
    return layout


def render_svg(source: str, *, nodes: int, edges: int, pinned: bool = False) -> Canvas:
    """Lay out ``source`` (``nodes`` and ``edges`` drawn) as inline SVG, or say why not.

    A ``pinned`` source carries every position already (``editor.graph.dot.Pins``): it is
    drawn by ``neato -n2``, which places nothing and routes only the edges without a path.
    """
    problem = _too_large(nodes, edges)
    if problem is not None:
        return Canvas(None, problem)
    key = _CACHE_PREFIX + hashlib.sha256(source.encode("utf-8")).hexdigest()
    cache = caches["default"]
    svg = cache.get(key)
    if svg is not None:
        return Canvas(svg)
    output = _run(["neato", "-n2", "-Tsvg"] if pinned else ["dot", "-Tsvg"], source)
    if isinstance(output, str):
        return Canvas(None, output)
    svg = _PROLOGUE.sub("", output.decode("utf-8", "replace"))
    cache.set(key, svg, None)
    return Canvas(svg)
