"""DOT source → SVG through the ``dot`` binary, with a time limit and a size cap.

``graphviz``'s own ``pipe()`` has no timeout, and a dense graph can keep ``dot``
busy for minutes, so ``dot`` runs under :func:`subprocess.run` with one. Graphs
over the drawing cap are not handed to ``dot`` at all. Renders are cached by
the SHA-256 of their DOT source in Django's cache, so a frozen version is laid
out once and an unchanged draft is never laid out twice.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches

__all__ = ["Canvas", "render_svg"]

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


def render_svg(source: str, *, nodes: int, edges: int) -> Canvas:
    """Lay out ``source`` (``nodes`` and ``edges`` drawn) as inline SVG, or say why not."""
    max_nodes = int(_setting("GATEHOUSE_DRAW_MAX_NODES", 500))
    max_edges = int(_setting("GATEHOUSE_DRAW_MAX_EDGES", 2000))
    if nodes > max_nodes or edges > max_edges:
        return Canvas(
            None,
            f"{TOO_LARGE}: it has {nodes} nodes and {edges} edges, and the canvas draws "
            f"at most {max_nodes} nodes and {max_edges} edges.",
        )
    key = _CACHE_PREFIX + hashlib.sha256(source.encode("utf-8")).hexdigest()
    cache = caches["default"]
    svg = cache.get(key)
    if svg is not None:
        return Canvas(svg)
    binary = shutil.which("dot")
    if binary is None:
        return Canvas(None, "Graphviz (the dot program) is not installed on this server.")
    timeout = float(_setting("GATEHOUSE_GRAPHVIZ_TIMEOUT", 5.0))
    try:
        result = subprocess.run(
            [binary, "-Tsvg"],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Canvas(None, f"{TOO_LARGE}: laying it out took longer than {timeout:g} s.")
    if result.returncode != 0:
        return Canvas(None, "Graphviz could not draw this graph.")
    svg = _PROLOGUE.sub("", result.stdout.decode("utf-8", "replace"))
    cache.set(key, svg, None)
    return Canvas(svg)
