"""Frozen versions: a document's list, the permanent page ``/g/<hex>/``, its download, Compare."""

from __future__ import annotations

from dataclasses import fields

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.forms import StartRunForm
from editor.graph import GraphHash, hex_digits, short_hash, wire_value
from editor.graph.jsonio import pretty_json
from editor.services import documents
from editor.services.access import can_author, can_operate
from editor.services.documents import canvas, comparing, editing, editor_edits, graphs, samples
from editor.services.errors import InvalidRequest, UnknownDocument
from editor.services.runs import pages as run_pages
from editor.views.graphs import editor_url, is_fragment_request
from editor.views.htmx import HtmxHttpRequest


@require_safe
@vary_on_headers("HX-Request")
def version_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The document's versions, newest first, fifty a page (a cursor on the number); each
    with **Compare** (with the version before it: older → newer) and, for authors,
    **Restore** (the draft becomes that version)."""
    cursor = request.GET.get("cursor") or None
    document = documents.get_document(slug, with_versions=False)
    page, previous = documents.versions_with_previous(slug, cursor=cursor)
    rows = list(zip(page.items, previous, strict=True))
    template = "versions/list.html#rows" if request.htmx else "versions/list.html"
    return render(
        request,
        template,
        {
            "document": document,
            "editor_url": editor_url(slug),
            "versions": page.items,
            "rows": rows,
            "next": page.next,
            "paged": cursor is not None,
            "can_restore": can_author(request.user),
        },
    )


@require_POST
def restore(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Restore** a version into the draft (authors): an edit the editor's Undo takes back;
    the editor says so."""
    draft = editing.open_draft(request.user, slug, reverse("editor", args=[slug]))
    if not draft.can_edit:
        raise PermissionDenied("Only authors may restore a version into the draft.")
    try:
        said = editor_edits.restore_version(request.user, draft, request.POST.get("version", ""))
    except InvalidRequest as refused:
        messages.error(request, f"Nothing was restored: {refused}.")
        return redirect("versions", slug=slug)
    messages.success(request, said)
    return redirect("editor", slug=slug)


@require_safe
def prefixed_graph(request: HttpRequest, digest: GraphHash) -> HttpResponse:
    """``/g/sha256:<hex>/`` is the same page as ``/g/<hex>/``."""
    target = reverse("graph", args=[digest])
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
def graph_page(request: HtmxHttpRequest, digest: GraphHash) -> HttpResponse:
    graph = graphs.load_graph(digest)
    document = _from_document(request)
    version = None
    if document is not None:
        version = next((v for v in document.versions or () if v.graph == digest), None)
    query = f"?document={document.slug}" if document else ""
    context = {
        "digest": digest,
        "hex": hex_digits(digest),
        "short": short_hash(digest),
        "document": document,
        "version": version,
        "editor_url": editor_url(document.slug) if document else None,
        "download_url": reverse("graph_download", args=[digest]) + query,
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
        "input_form": samples.input_form(graph, prefix="start"),
    }
    template = "versions/graph.html#json" if request.htmx else "versions/graph.html"
    return render(request, template, context)


def _compare_choices(document: documents.DocumentInfo, *, exclude: str) -> list[tuple[str, str]]:
    choices = [(documents.DRAFT, "the draft")]
    for version in document.versions or ():
        if version.graph != exclude:
            choices.append((version.graph, comparing.version_label(version)))
    return choices


@require_safe
def download(request: HttpRequest, digest: GraphHash) -> HttpResponse:
    body = graphs.export_graph(digest)
    document = _from_document(request)
    name = f"{short_hash(digest)}.json"
    if document is not None:
        name = f"{document.slug}-{name}"
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_safe
@vary_on_headers("HX-Request")
def compare(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    before = request.GET.get("from") or None
    after = request.GET.get("to") or None
    compared = comparing.compare(slug, before=before, after=after)
    context = {
        **{item.name: getattr(compared, item.name) for item in fields(compared)},
        "editor_url": editor_url(slug),
    }
    template = (
        "versions/compare.html#result" if is_fragment_request(request) else "versions/compare.html"
    )
    return render(request, template, context)
