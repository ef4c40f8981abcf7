"""A pinned drawing drawn again piece by piece.

The editor draws a draft at the places of its kept layout (``neato -n2``, every node placed, the
drawing not moved to the origin: :func:`editor.graph.dot.drawing`). In such a drawing a node's
SVG depends only on its own DOT statement, and an edge's on its statement and its two ends'.
An edit of a name, a prompt or a label changes one or two statements, so instead of drawing
hundreds of nodes again, :func:`draw` draws the changed items alone (a small graph: them and
the ends their edges need) and puts their SVG in place of the old in the last drawing of the
same structure that this process made. The result is the SVG Graphviz makes of the whole
source, byte for byte: the frame (the SVG's size and the translation of its items) comes from
the items' bounding box, so the last drawing's frame is kept only when every changed item lies,
before and after, well inside it; otherwise, and whenever anything inside a cluster changed,
the whole source is drawn, as it is the first time.

Pure text work (no Django): the caller runs Graphviz (``render``) within its own limits.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from editor.recent import Recent

__all__ = ["Item", "draw", "forget"]

#: The start of an item's group in Graphviz's SVG: an optional comment, then the group.
_ITEM = re.compile(
    r'^(?:<!-- [^\n]* -->\n)?<g id="([^"]*)" class="(?:node|edge|cluster)[ "]', re.MULTILINE
)
_TAIL = "</g>\n</svg>\n"
_VIEW_BOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_TRANSLATE = re.compile(
    r'<g id="graph0" class="graph" transform="[^"]*translate\(([-\d.]+) ([-\d.]+)\)"'
)
_POINTS = re.compile(r' (?:points|d)="([^"]*)"')
_PAIR = re.compile(r"(-?\d*\.?\d+),(-?\d*\.?\d+)")
_TEXT = re.compile(
    r'<text [^>]*?x="([-\d.]+)" y="([-\d.]+)"[^>]*?font-size="([\d.]+)"[^>]*>([^<]*)</text>'
)
_ELLIPSE = re.compile(r'<ellipse [^>]*?cx="([-\d.]+)" cy="([-\d.]+)" rx="([\d.]+)" ry="([\d.]+)"')
#: Graphviz's padding around the bounding box (its ``pad`` default, 4 points).
_PAD = 4.0
#: How far inside the frame a changed item must stay, in points, beyond its own estimate.
_MARGIN = 12.0
#: Drawings kept per process (one per structure being edited).
_KEPT = 16

Box = tuple[float, float, float, float]


class Item(Protocol):
    """What :func:`draw` needs of each item (``editor.graph.dot.DrawnItem``)."""

    @property
    def element(self) -> str: ...
    @property
    def statement(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def ends(self) -> tuple[str, ...]: ...
    @property
    def whole(self) -> bool: ...


@dataclass(frozen=True)
class _Drawn:
    """A drawing as SVG pieces: its head (up to the first item), each item's group by element id
    in the order Graphviz wrote them, what each was drawn from, and its frame (the items'
    bounding box, in the items' own coordinates)."""

    head: str
    order: tuple[str, ...]
    groups: dict[str, str]
    keys: dict[str, str]
    frame: Box

    def svg(self) -> str:
        return self.head + "".join(self.groups[element] for element in self.order) + _TAIL


_drawn: Recent[str, _Drawn] = Recent(_KEPT)


def forget() -> None:
    """Forget every drawing kept (tests)."""
    _drawn.clear()


def draw(header: str, items: Sequence[Item], source: str, render: Callable[[str], str]) -> str:
    """The SVG of ``source`` (``header`` followed by ``items``' statements), pinned.

    ``render(dot)`` draws a DOT source with ``neato -n2 -Tsvg`` and returns its SVG without the
    XML prologue (raising what it raises when it cannot). It runs once: on the changed items
    alone when the last drawing of this structure can take them, else on ``source``.
    """
    statements = {item.name: item.statement for item in items if not item.ends}
    keys = {item.element: _key(item, statements) for item in items}
    shape = _shape(header, items)
    base = _drawn.get(shape)
    if base is not None and base.keys.keys() == keys.keys():
        changed = [item for item in items if base.keys[item.element] != keys[item.element]]
        if not changed:
            return base.svg()
        drawn = _patched(base, header, changed, statements, keys, render)
        if drawn is not None:
            _drawn.put(shape, drawn)
            return drawn.svg()
    svg = render(source)
    whole = _split(svg, keys)
    if whole is not None:
        _drawn.put(shape, whole)
    return svg


def _key(item: Item, statements: dict[str, str]) -> str:
    return "\n".join([item.statement, *(statements.get(end, "") for end in item.ends)])


def _shape(header: str, items: Sequence[Item]) -> str:
    """Names a drawing's structure: its header and its items with their ends."""
    named = repr((header, [(item.element, item.ends, item.whole) for item in items]))
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()


def _patched(
    base: _Drawn,
    header: str,
    changed: list[Item],
    statements: dict[str, str],
    keys: dict[str, str],
    render: Callable[[str], str],
) -> _Drawn | None:
    """``base`` with the ``changed`` items drawn again alone, or ``None`` when it cannot be
    (an item in a cluster, too many, or one that reaches the frame's edge)."""
    if any(item.whole for item in changed) or len(changed) > max(16, len(keys) // 4):
        return None
    names = dict.fromkeys(
        [
            *(item.name for item in changed if not item.ends),
            *(end for item in changed for end in item.ends),
        ]
    )
    body = [statements[name] for name in names]
    body += [item.statement for item in changed if item.ends]
    small = _split(render(header + "".join(body) + "}\n"), None)
    if small is None:
        return None
    groups = dict(base.groups)
    for item in changed:
        group = small.groups.get(item.element)
        if group is None or not _keeps_frame(base.groups[item.element], group, base.frame):
            return None
        groups[item.element] = group
    return _Drawn(base.head, base.order, groups, keys, base.frame)


def _split(svg: str, keys: dict[str, str] | None) -> _Drawn | None:
    """``svg`` in pieces (``keys``: what each item was drawn from, and then every item must be
    there); ``None`` when it does not have the shape this module reads."""
    if not svg.endswith(_TAIL):
        return None
    starts = list(_ITEM.finditer(svg))
    if not starts:
        return None
    frame = _frame(svg[: starts[0].start()])
    if frame is None:
        return None
    ends = [match.start() for match in starts[1:]] + [len(svg) - len(_TAIL)]
    groups: dict[str, str] = {}
    order: list[str] = []
    for match, end in zip(starts, ends, strict=True):
        element = html.unescape(match.group(1))
        if element in groups:
            return None
        groups[element] = svg[match.start() : end]
        order.append(element)
    if keys is not None and groups.keys() != keys.keys():
        return None
    return _Drawn(svg[: starts[0].start()], tuple(order), groups, keys or {}, frame)


def _frame(head: str) -> Box | None:
    """The items' bounding box, from the SVG's size and the translation of its items."""
    view_box = _VIEW_BOX.search(head)
    translate = _TRANSLATE.search(head)
    if view_box is None or translate is None:
        return None
    _, _, width, height = (float(number) for number in view_box.groups())
    x, y = float(translate.group(1)), float(translate.group(2))
    return (_PAD - x, _PAD - y, width - x - _PAD, height - y - _PAD)


def _keeps_frame(old: str, new: str, frame: Box) -> bool:
    """Whether an item drawn as ``new`` instead of ``old`` leaves the drawing's bounding box as
    it is: on each side, either both lie well inside it, or the item is a node whose outline
    reaches exactly as far as before. (Graphviz counts a node's box, which its outline spans
    and its text stays within, and an edge's lines with its label's box.)"""
    start = old.find("<g id=")
    node = ' class="node' in old[start : old.find(">", start)]
    before, after = _extent(old), _extent(new)
    if before is None or after is None:
        return False
    kind = 0 if node else 1
    for side in range(4):
        if before[0][side] == after[0][side] and node:
            continue
        if not (_inside(before[kind], frame, side) and _inside(after[kind], frame, side)):
            return False
    return True


def _extent(group: str) -> tuple[Box, Box] | None:
    """An item's outline (its lines and shapes), and a box that holds everything Graphviz
    counts in its bounding box: the outline and its text at a generous width (a character as
    wide as the font is high)."""
    xs: list[float] = []
    ys: list[float] = []
    for points in _POINTS.findall(group):
        for x, y in _PAIR.findall(points):
            xs.append(float(x))
            ys.append(float(y))
    for cx, cy, rx, ry in _ELLIPSE.findall(group):
        xs += [float(cx) - float(rx), float(cx) + float(rx)]
        ys += [float(cy) - float(ry), float(cy) + float(ry)]
    if not xs:
        return None
    outline = (min(xs), min(ys), max(xs), max(ys))
    for x, y, size, text in _TEXT.findall(group):
        width = len(html.unescape(text)) * float(size)
        xs += [float(x) - width, float(x) + width]
        ys += [float(y) - float(size) * 1.5, float(y) + float(size)]
    return outline, (min(xs), min(ys), max(xs), max(ys))


def _inside(box: Box, frame: Box, side: int) -> bool:
    """Whether ``box`` stays well inside ``frame`` on ``side`` (0, 1: left, top; 2, 3: right,
    bottom, in SVG's coordinates)."""
    if side < 2:
        return box[side] - _MARGIN > frame[side]
    return box[side] + _MARGIN < frame[side]
