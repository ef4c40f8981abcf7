"""**Compare**: two sides of a document (its draft, or any of its versions) side by side, the
structural changes listed and the newer side drawn with them marked.

The canvas marks each change by a sign as well as a colour: added nodes and edges (``+``,
green), changed nodes (``~``, yellow), and the removed ones (``−``) drawn as grey dashed ghosts
where they were, taken from the older side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from editor.graph import Graph, MalformedDocument, SubgraphPath, parse_document, short_hash
from editor.graph.model import Edge
from editor.services import documents
from editor.services.documents import canvas, graphs
from editor.services.documents.canvas import DrawnCanvas
from editor.services.errors import InvalidGraph, UnknownGraph

__all__ = [
    "ADDED_FILL",
    "CHANGED_FILL",
    "Comparison",
    "compare",
    "version_label",
]

#: Fill colours on the Compare canvas; the legend also says it in words.
ADDED_FILL = "#d5f5dc"
CHANGED_FILL = "#fff1c2"
ADDED_EDGE = "#15803d"
REMOVED_EDGE = "#6b7280"


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two sides of a document compared: which (``before``, ``after``: a graph hash or
    ``draft``) and how they are named, the sides one may choose, and the changes with their
    canvas; or the ``problem`` that kept them from being compared."""

    document: documents.DocumentInfo
    choices: list[tuple[str, str]]
    before: str
    after: str
    before_label: str
    after_label: str
    changes: dict[str, Any] | None = None
    problem: str | None = None
    canvas: DrawnCanvas | None = None
    #: The sides were asked for newer first, and are shown the other way round.
    flipped: bool = False


def version_label(version: documents.VersionInfo) -> str:
    """A version as the sides are named: its number and its short hash."""
    return f"version {version.version} · {short_hash(version.graph)}"


def compare(slug: str, *, before: str | None = None, after: str | None = None) -> Comparison:
    """``before`` (by default the latest version, or the draft when none is frozen) against
    ``after`` (by default the draft), read older → newer: the two are swapped when ``before``
    is the newer (a version's number; the draft is newest). Raises ``UnknownDocument``; a side
    that is no stored graph, or a draft that does not parse, is the comparison's
    ``problem``."""
    document = documents.get_document(slug)
    versions = document.versions or []
    latest = versions[0].graph if versions else documents.DRAFT
    before = before or latest
    after = after or documents.DRAFT
    flipped = _age(after, versions) < _age(before, versions)
    if flipped:
        before, after = after, before  # always older → newer, whichever was chosen first
    compared = Comparison(
        document=document,
        choices=[(documents.DRAFT, "the draft")] + [(v.graph, version_label(v)) for v in versions],
        before=before,
        after=after,
        before_label=_side_label(before, versions),
        after_label=_side_label(after, versions),
        flipped=flipped,
    )
    try:
        changes = documents.diff(slug, before=before, after=after)
    except UnknownGraph:
        problem = "One of the sides is not a stored graph's hash nor `draft`."
        return replace(compared, problem=problem)
    except InvalidGraph as error:
        problem = f"The draft does not parse: {error.errors[0]['message']}"
        return replace(compared, problem=problem)
    for change in changes["nodes"]["changed"]:
        for field in change["fields"]:
            field["before"] = _json(field, "from")
            field["after"] = _json(field, "to")
    newer = _side_graph(slug, after)
    older = _side_graph(slug, before)
    drawn = _compared_canvas(newer, older, changes) if newer is not None else None
    return replace(compared, changes=changes, canvas=drawn)


def _age(side: str, versions: list[documents.VersionInfo]) -> int:
    """How new a side is: its version number, the draft after every version (a graph that
    is none of the document's versions keeps its place: 0)."""
    if side == documents.DRAFT:
        return 1 << 62
    return next((version.version for version in versions if version.graph == side), 0)


def _side_graph(slug: str, side: str) -> Graph | None:
    if side == documents.DRAFT:
        try:
            return parse_document(documents.read_draft(slug).text)
        except MalformedDocument:
            return None
    return graphs.load_graph(side)


def _side_label(side: str, versions: list[documents.VersionInfo]) -> str:
    if side == documents.DRAFT:
        return "the draft"
    for version in versions:
        if version.graph == side:
            return version_label(version)
    return short_hash(side)


def _json(field: dict[str, Any], side: str) -> str | None:
    return json.dumps(field[side], ensure_ascii=False) if side in field else None


def _compared_canvas(newer: Graph, older: Graph | None, changes: dict[str, Any]) -> DrawnCanvas:
    """The newer side with the removed nodes and edges of the older put back as ghosts, each
    change marked by its fill and its sign."""
    removed_ids = set(changes["nodes"]["removed"])
    ghosts = [node for node in (older.nodes if older else ()) if node.id in removed_ids]
    known = {node.id for node in newer.nodes} | removed_ids
    removed_edges = [
        Edge(edge["from"], edge["to"], edge.get("label"))
        for edge in changes["edges"]["removed"]
        if edge["from"] in known and edge["to"] in known
    ]
    merged = Graph(newer.schema_version, (*newer.nodes, *ghosts), (*newer.edges, *removed_edges))
    top: SubgraphPath = ()
    highlight = {(top, node): ADDED_FILL for node in changes["nodes"]["added"]}
    marks = {(top, node): "+ " for node in changes["nodes"]["added"]}
    for change in changes["nodes"]["changed"]:
        highlight[(top, change["node"])] = CHANGED_FILL
        marks[(top, change["node"])] = "~ "
    for node in ghosts:
        marks[(top, node.id)] = "− "
    edge_marks = {
        (edge["from"], edge["to"], edge.get("label")): ("+ ", ADDED_EDGE)
        for edge in changes["edges"]["added"]
    }
    for edge in removed_edges:
        edge_marks[(edge.source, edge.target, edge.label)] = ("− ", REMOVED_EDGE)
    return canvas.draw_compared(
        merged,
        highlight=highlight,
        signs=marks,
        ghosts={(top, node.id) for node in ghosts},
        edge_marks=edge_marks,
    )
