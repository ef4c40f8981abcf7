"""DOT source → SVG (or a layout) through Graphviz, with a time limit, a size cap and a cap on
how many Graphviz processes run at once.

``graphviz``'s own ``pipe()`` has no timeout, and a dense graph can keep ``dot`` busy for
minutes, so ``dot`` runs under :func:`subprocess.run` with one. Graphs over the drawing cap are
not handed to ``dot`` at all. Renders are cached by the SHA-256 of their DOT source in the
canvas cache (``CACHES["canvas"]``: a table of the database that every web process shares,
bounded by ``GATEHOUSE_CANVAS_CACHE_ENTRIES``; the SVG is kept compressed), so a graph is laid
out once per installation and an unchanged draft is never laid out twice; a layout that ran out
of time is cached too, as *too large to draw* with its size, so showing that graph again costs
nothing, in any process.

Each process runs at most ``GATEHOUSE_GRAPHVIZ_MAX_PROCESSES`` Graphviz processes at once. A
request that finds them all taken waits at most ``GATEHOUSE_GRAPHVIZ_WAIT`` seconds for one,
then shows *busy, try again* instead of a canvas (not cached: the next view tries again). With
more threads per web process than that (``GATEHOUSE_WEB_THREADS``, ``editor/asgi.py``), a burst
of views of large graphs leaves threads free for everything else, ``/healthz`` included.

The editor keeps a draft's node positions between edits (:func:`lay_out`, ``dot -Tjson0``): an
edit that changes no structure is drawn at those places by ``neato -n2``, which only routes;
given the drawing's items, only the items an edit changed are drawn again (:mod:`editor.pieces`).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches

from editor import pieces

__all__ = ["BUSY", "CACHE", "TOO_LARGE", "Canvas", "lay_out", "render_svg"]

TOO_LARGE = "This graph is too large to draw here"
BUSY = (
    "The server is drawing other graphs right now, so this one was not drawn. "
    "Try again in a moment."
)
_PROLOGUE = re.compile(r"\A(?:<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|\s)+", re.DOTALL)
#: The cache alias (editor.settings: a table of the database every web process shares).
CACHE = "canvas"
_CACHE_PREFIX = "canvas:"
_LAYOUT_PREFIX = "layout:"
#: Cache values: (``_SVG``, the SVG compressed), or (``_TIMED_OUT``, the message) for a layout
#: that ran out of time.
_SVG = "svg"
_TIMED_OUT = "timed-out"


@dataclass(frozen=True)
class Canvas:
    """A rendered canvas: the SVG to inline, or why there is none.

    ``busy``: not drawn only because every Graphviz slot was taken; drawing it again later may
    work, so nothing about it is cached."""

    svg: str | None
    problem: str | None = None
    busy: bool = False

    @property
    def drawn(self) -> bool:
        return self.svg is not None


class _Refused(Exception):
    """Graphviz gave no output: ``message`` says why; ``busy`` when no slot was free."""

    def __init__(self, message: str, *, busy: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.message, self.busy, self.timed_out = message, busy, timed_out


def _setting(name: str, default: float) -> float:
    return getattr(settings, name, default)


_slots_guard = threading.Lock()
_slots_by_size: dict[int, threading.BoundedSemaphore] = {}


def _slots() -> threading.BoundedSemaphore:
    """The process's Graphviz slots (one semaphore per configured size, so a test that
    changes the setting gets slots of its own)."""
    size = max(1, int(_setting("GATEHOUSE_GRAPHVIZ_MAX_PROCESSES", 2)))
    with _slots_guard:
        slots = _slots_by_size.get(size)
        if slots is None:
            slots = _slots_by_size[size] = threading.BoundedSemaphore(size)
        return slots


def _too_large(nodes: int, edges: int) -> str | None:
    max_nodes = int(_setting("GATEHOUSE_DRAW_MAX_NODES", 500))
    max_edges = int(_setting("GATEHOUSE_DRAW_MAX_EDGES", 2000))
    if nodes > max_nodes or edges > max_edges:
        return (
            f"{TOO_LARGE}: it has {nodes} nodes and {edges} edges, and the canvas draws "
            f"at most {max_nodes} nodes and {max_edges} edges."
        )
    return None


def _timed_out(nodes: int, edges: int, timeout: float) -> str:
    return (
        f"{TOO_LARGE}: laying out its {nodes} node{'s' if nodes != 1 else ''} and "
        f"{edges} edge{'s' if edges != 1 else ''} took longer than {timeout:g} s."
    )


@contextmanager
def _slot() -> Iterator[None]:
    """One of the process's Graphviz slots, waited for at most ``GATEHOUSE_GRAPHVIZ_WAIT``
    seconds; raises :class:`_Refused` (busy) when none came free."""
    slots = _slots()
    if not slots.acquire(timeout=max(0.0, float(_setting("GATEHOUSE_GRAPHVIZ_WAIT", 2)))):
        raise _Refused(BUSY, busy=True)
    try:
        yield
    finally:
        slots.release()


def _run(command: list[str], source: str, *, nodes: int, edges: int) -> bytes:
    """What ``command`` prints for ``source`` (run inside a :func:`_slot`). Raises
    :class:`_Refused` when there is nothing."""
    binary = shutil.which(command[0])
    if binary is None:
        raise _Refused("Graphviz (the dot program) is not installed on this server.")
    timeout = float(_setting("GATEHOUSE_GRAPHVIZ_TIMEOUT", 5.0))
    try:
        result = subprocess.run(
            [binary, *command[1:]],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        raise _Refused(_timed_out(nodes, edges, timeout), timed_out=True) from None
    if result.returncode != 0:
        raise _Refused("Graphviz could not draw this graph.")
    return result.stdout


def lay_out(source: str, *, nodes: int, edges: int) -> dict[str, Any] | str:
    """Where ``dot`` places everything in ``source``: ``{"bb", "nodes": {id: [pos, label]},
    "edges": {id: [pos, lp]}, "clusters": {name: [bb, lp]}}`` (edges by their ``id``
    attribute without its ``edge-`` prefix), or why it cannot (a message)."""
    problem = _too_large(nodes, edges)
    if problem is not None:
        return problem
    key = _LAYOUT_PREFIX + hashlib.sha256(source.encode("utf-8")).hexdigest()
    timed_out = _cached(key)  # only time-outs are kept: a layout is kept with its draft
    if timed_out is not None and timed_out.problem is not None:
        return timed_out.problem
    try:
        with _slot():
            output = _run(["dot", "-Tjson0"], source, nodes=nodes, edges=edges)
    except _Refused as refused:
        if refused.timed_out:  # remembered, so the next view costs nothing
            _cache().set(key, (_TIMED_OUT, refused.message), None)
        return refused.message
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


def _draw(
    command: list[str],
    source: str,
    *,
    nodes: int,
    edges: int,
    items: tuple[str, Sequence[pieces.Item]] | None,
) -> str:
    """The SVG of ``source`` (run inside a :func:`_slot`); given its ``items``, drawn piece by
    piece (:mod:`editor.pieces`). Raises :class:`_Refused`."""

    def run(text: str) -> str:
        try:
            output = _run(command, text, nodes=nodes, edges=edges)
        except _Refused as refused:
            if refused.timed_out and text is not source:
                # A part of the drawing ran out of time: not a verdict on the whole.
                raise _Refused(refused.message) from None
            raise
        return _PROLOGUE.sub("", output.decode("utf-8", "replace"))

    if items is None:
        return run(source)
    return pieces.draw(items[0], items[1], source, run)


def render_svg(
    source: str,
    *,
    nodes: int,
    edges: int,
    pinned: bool = False,
    items: tuple[str, Sequence[pieces.Item]] | None = None,
) -> Canvas:
    """Lay out ``source`` (``nodes`` and ``edges`` drawn) as inline SVG, or say why not.

    A ``pinned`` source carries every position already (``editor.graph.dot.Pins``): it is
    drawn by ``neato -n2``, which places nothing and routes only the edges without a path.
    With its ``items`` (the header and the items of ``editor.graph.dot.Drawing``), only what
    changed since this process last drew that structure is drawn again (:mod:`editor.pieces`).
    """
    problem = _too_large(nodes, edges)
    if problem is not None:
        return Canvas(None, problem)
    key = _CACHE_PREFIX + hashlib.sha256(source.encode("utf-8")).hexdigest()
    cached = _cached(key)
    if cached is not None:
        return cached
    command = ["neato", "-n2", "-Tsvg"] if pinned else ["dot", "-Tsvg"]
    try:
        with _slot():
            # Another request may have drawn the same source while this one waited.
            cached = _cached(key)
            if cached is not None:
                return cached
            svg = _draw(command, source, nodes=nodes, edges=edges, items=items if pinned else None)
    except _Refused as refused:
        if refused.timed_out:  # remembered, so the next view costs nothing
            _cache().set(key, (_TIMED_OUT, refused.message), None)
        return Canvas(None, refused.message, busy=refused.busy)
    # Compressed: an SVG of hundreds of nodes is hundreds of kilobytes of repetitive text.
    _cache().set(key, (_SVG, zlib.compress(svg.encode("utf-8"), 6)), None)
    return Canvas(svg)
