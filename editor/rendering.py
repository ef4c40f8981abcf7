"""DOT source → SVG through the ``dot`` binary, with a time limit, a size cap and a cap on how
many ``dot`` processes run at once.

``graphviz``'s own ``pipe()`` has no timeout, and a dense graph can keep ``dot`` busy for
minutes, so ``dot`` runs under :func:`subprocess.run` with one. Graphs over the drawing cap are
not handed to ``dot`` at all. Renders are cached by the SHA-256 of their DOT source in the
canvas cache (``CACHES["canvas"]``: a table of the database that every web process shares,
bounded by ``GATEHOUSE_CANVAS_CACHE_ENTRIES``; the SVG is kept compressed), so a graph is laid
out once per installation and an unchanged draft is never laid out twice; a layout that ran out
of time is cached too, as *too large to draw* with its size, so showing that graph again costs
nothing, in any process.

Each process runs at most ``GATEHOUSE_GRAPHVIZ_MAX_PROCESSES`` layouts at once. A request that
finds them all taken waits at most ``GATEHOUSE_GRAPHVIZ_WAIT`` seconds for one, then shows
*busy, try again* instead of a canvas (not cached: the next view tries again). With more
threads per process than layouts (gunicorn's ``--threads``), a burst of views of large graphs
leaves threads free for everything else, ``/healthz`` included.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import threading
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import BaseCache, caches

__all__ = ["BUSY", "CACHE", "TOO_LARGE", "Canvas", "render_svg"]

TOO_LARGE = "This graph is too large to draw here"
BUSY = (
    "The server is drawing other graphs right now, so this one was not drawn. "
    "Try again in a moment."
)
_PROLOGUE = re.compile(r"\A(?:<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|\s)+", re.DOTALL)
#: The cache alias (editor.settings: a table of the database every web process shares).
CACHE = "canvas"
_CACHE_PREFIX = "canvas:"
#: Cache values: (``_SVG``, the SVG compressed), or (``_TIMED_OUT``, the message) for a layout
#: that ran out of time.
_SVG = "svg"
_TIMED_OUT = "timed-out"


@dataclass(frozen=True)
class Canvas:
    """A rendered canvas: the SVG to inline, or why there is none.

    ``busy``: not drawn only because every ``dot`` slot was taken; drawing it again later may
    work, so nothing about it is cached."""

    svg: str | None
    problem: str | None = None
    busy: bool = False

    @property
    def drawn(self) -> bool:
        return self.svg is not None


def _setting(name: str, default: float) -> float:
    return getattr(settings, name, default)


_slots_guard = threading.Lock()
_slots_by_size: dict[int, threading.BoundedSemaphore] = {}


def _slots() -> threading.BoundedSemaphore:
    """The process's ``dot`` slots (one semaphore per configured size, so a test that changes
    the setting gets slots of its own)."""
    size = max(1, int(_setting("GATEHOUSE_GRAPHVIZ_MAX_PROCESSES", 2)))
    with _slots_guard:
        slots = _slots_by_size.get(size)
        if slots is None:
            slots = _slots_by_size[size] = threading.BoundedSemaphore(size)
        return slots


def _cache() -> BaseCache:
    return caches[CACHE]


def _cached(key: str) -> Canvas | None:
    value = _cache().get(key)
    if isinstance(value, tuple) and len(value) == 2:
        kind, content = value
        if kind == _SVG and isinstance(content, bytes):
            return Canvas(zlib.decompress(content).decode("utf-8"))
        if kind == _TIMED_OUT:
            return Canvas(None, str(content))
    return None


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
    cached = _cached(key)
    if cached is not None:
        return cached
    binary = shutil.which("dot")
    if binary is None:
        return Canvas(None, "Graphviz (the dot program) is not installed on this server.")
    slots = _slots()
    if not slots.acquire(timeout=max(0.0, float(_setting("GATEHOUSE_GRAPHVIZ_WAIT", 2)))):
        return Canvas(None, BUSY, busy=True)
    try:
        # Another request may have laid the same source out while this one waited.
        cached = _cached(key)
        if cached is not None:
            return cached
        return _lay_out(binary, source, key, nodes=nodes, edges=edges)
    finally:
        slots.release()


def _lay_out(binary: str, source: str, key: str, *, nodes: int, edges: int) -> Canvas:
    cache = _cache()
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
        # subprocess.run has killed dot. Remembered, so the next view costs nothing.
        problem = (
            f"{TOO_LARGE}: laying out its {nodes} node{'s' if nodes != 1 else ''} and "
            f"{edges} edge{'s' if edges != 1 else ''} took longer than {timeout:g} s."
        )
        cache.set(key, (_TIMED_OUT, problem), None)
        return Canvas(None, problem)
    if result.returncode != 0:
        return Canvas(None, "Graphviz could not draw this graph.")
    svg = _PROLOGUE.sub("", result.stdout.decode("utf-8", "replace"))
    # Compressed: an SVG of hundreds of nodes is hundreds of kilobytes of repetitive text.
    cache.set(key, (_SVG, zlib.compress(svg.encode("utf-8"), 6)), None)
    return Canvas(svg)
