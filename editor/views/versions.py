"""Frozen versions: a document's list, the permanent page ``/g/<hex>/``, its download, Compare."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from editor.forms import StartRunForm
from editor.graph import Graph, MalformedDocument, parse_document, short_hash, wire_value
from editor.graph.jsonio import pretty_json
from editor.graph.model import Edge
from editor.services import documents
from editor.services.access import can_operate
from editor.services.documents import canvas, graphs
from editor.services.errors import InvalidGraph, UnknownDocument, UnknownGraph
from editor.services.runs import pages as run_pages
from editor.views.graphs import editor_url, is_fragment_request
from editor.views.htmx import HtmxHttpRequest

#: Fill colours on the Compare canvas; the legend also says it in words.
ADDED_FILL = "#d5f5dc"
CHANGED_FILL = "#fff1c2"
ADDED_EDGE = "#15803d"
REMOVED_EDGE = "#6b7280"


@require_safe
@vary_on_headers("HX-Request")
def version_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The document's versions, newest first, fifty a page (a cursor on the number)."""
    cursor = request.GET.get("cursor") or None
    document = documents.get_document(slug, with_versions=False)
    page = documents.list_versions(slug, cursor=cursor)
    template = "versions/list.html#rows" if request.htmx else "versions/list.html"
    return render(
        request,
        template,
        {
            "document": document,
            "editor_url": editor_url(slug),
            "versions": page.items,
            "next": page.next,
            "paged": cursor is not None,
        },
    )


@require_safe
def prefixed_graph(request: HttpRequest, hex_digest: str) -> HttpResponse:
    """``/g/sha256:<hex>/`` is the same page as ``/g/<hex>/``."""
    target = reverse("graph", args=[hex_digest])
    if request.META.get("QUERY_STRING"):
        target += "?" + request.META["QUERY_STRING"]
    return redirect(target, permanent=True)


def _from_document(request: HttpRequest) -> documents.DocumentInfo | None:
    """The document named by ``?document=``, when it exists."""
    slug = request.GET.get("document", "")
    if not slug:
        return None
    try:
        return documents.get_document(slug)
    except UnknownDocument:
        return None


@require_safe
@vary_on_headers("HX-Request")
def graph_page(request: HtmxHttpRequest, hex_digest: str) -> HttpResponse:
    digest = f"sha256:{hex_digest}"
    graph = graphs.load_graph(digest)
    document = _from_document(request)
    version = None
    if document is not None:
        version = next((v for v in document.versions or () if v.graph == digest), None)
    query = f"?document={document.slug}" if document else ""
    context = {
        "digest": digest,
        "hex": hex_digest,
        "short": short_hash(hex_digest),
        "document": document,
        "version": version,
        "editor_url": editor_url(document.slug) if document else None,
        "download_url": reverse("graph_download", args=[hex_digest]) + query,
        "canvas": canvas.draw(graph),
        "json": pretty_json(wire_value(graph)),
        "compare_choices": _compare_choices(document, exclude=digest) if document else [],
        # Without ?document=, the documents this graph is a version of, to open it from one.
        "found_in": [] if document else documents.versions_of_graph(digest),
        "can_operate": can_operate(request.user),
        "start_form": StartRunForm(
            initial={
                "input": run_pages.suggested_input(graph),
                "document": document.slug if document else "",
            }
        ),
    }
    template = "versions/graph.html#json" if request.htmx else "versions/graph.html"
    return render(request, template, context)


def _compare_choices(document: documents.DocumentInfo, *, exclude: str) -> list[tuple[str, str]]:
    choices = [(documents.DRAFT, "the draft")]
    for version in document.versions or ():
        if version.graph != exclude:
            choices.append((version.graph, _version_label(version)))
    return choices


@require_safe
def download(request: HttpRequest, hex_digest: str) -> HttpResponse:
    body = graphs.export_graph(f"sha256:{hex_digest}")
    document = _from_document(request)
    name = f"{short_hash(hex_digest)}.json"
    if document is not None:
        name = f"{document.slug}-{name}"
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _side_graph(slug: str, side: str) -> Graph | None:
    if side == documents.DRAFT:
        try:
            return parse_document(documents.read_draft(slug).text)
        except MalformedDocument:
            return None
    return graphs.load_graph(side)


def _side_label(side: str, document: documents.DocumentInfo) -> str:
    if side == documents.DRAFT:
        return "the draft"
    for version in document.versions or ():
        if version.graph == side:
            return _version_label(version)
    return short_hash(side)


def _version_label(version: documents.VersionInfo) -> str:
    return f"version {version.version} · {short_hash(version.graph)}"


def _compared_canvas(newer: Graph, older: Graph | None, changes: dict[str, Any]) -> Any:
    """The newer side drawn with what changed marked by a sign as well as a colour: added
    nodes and edges (+, green), changed nodes (~, yellow), and the removed ones (−) drawn as
    grey dashed ghosts where they were."""
    removed_ids = set(changes["nodes"]["removed"])
    ghosts = [node for node in (older.nodes if older else ()) if node.id in removed_ids]
    known = {node.id for node in newer.nodes} | removed_ids
    removed_edges = [
        Edge(edge["from"], edge["to"], edge.get("label"))
        for edge in changes["edges"]["removed"]
        if edge["from"] in known and edge["to"] in known
    ]
    merged = Graph(newer.schema_version, (*newer.nodes, *ghosts), (*newer.edges, *removed_edges))
    highlight: dict[tuple[tuple[str, ...], str], str] = {
        ((), node): ADDED_FILL for node in changes["nodes"]["added"]
    }
    marks: dict[tuple[tuple[str, ...], str], str] = {
        ((), node): "+ " for node in changes["nodes"]["added"]
    }
    for change in changes["nodes"]["changed"]:
        highlight[((), change["node"])] = CHANGED_FILL
        marks[((), change["node"])] = "~ "
    for node in ghosts:
        marks[((), node.id)] = "− "
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
        ghosts={((), node.id) for node in ghosts},
        edge_marks=edge_marks,
    )


def _json(field: dict[str, Any], side: str) -> str | None:
    return json.dumps(field[side], ensure_ascii=False) if side in field else None


@require_safe
@vary_on_headers("HX-Request")
def compare(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    document = documents.get_document(slug)
    choices = [(documents.DRAFT, "the draft")] + [
        (v.graph, _version_label(v)) for v in document.versions or ()
    ]
    latest = document.versions[0].graph if document.versions else documents.DRAFT
    before = request.GET.get("from") or latest
    after = request.GET.get("to") or documents.DRAFT
    context: dict[str, Any] = {
        "document": document,
        "editor_url": editor_url(slug),
        "choices": choices,
        "before": before,
        "after": after,
        "before_label": _side_label(before, document),
        "after_label": _side_label(after, document),
        "changes": None,
        "problem": None,
    }
    try:
        changes = documents.diff(slug, before=before, after=after)
    except UnknownGraph:
        context["problem"] = "One of the sides is not a stored graph's hash nor `draft`."
    except InvalidGraph as error:
        context["problem"] = f"The draft does not parse: {error.errors[0]['message']}"
    else:
        context["changes"] = changes
        for change in changes["nodes"]["changed"]:
            for field in change["fields"]:
                field["before"] = _json(field, "from")
                field["after"] = _json(field, "to")
        newer = _side_graph(slug, after)
        older = _side_graph(slug, before)
        if newer is not None:
            context["canvas"] = _compared_canvas(newer, older, changes)
            context["added_fill"], context["changed_fill"] = ADDED_FILL, CHANGED_FILL
    template = (
        "versions/compare.html#result" if is_fragment_request(request) else "versions/compare.html"
    )
    return render(request, template, context)
