"""``/``, ``/new/`` and ``/import/``: the graphs list, **New graph** and **Import JSON**."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from editor.forms import ImportForm, NewGraphForm
from editor.graph import hex_digits
from editor.services import agents, documents
from editor.services.access import can_author
from editor.services.errors import InvalidRequest
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT
from editor.views.htmx import HtmxHttpRequest


def is_fragment_request(request: HtmxHttpRequest) -> bool:
    """An htmx request for the fragment; a history restore (Back after a search) needs the page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def go_to(request: HtmxHttpRequest, url: str) -> HttpResponse:
    """After a post that worked: the browser goes to ``url`` (htmx is told to load it whole)."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def editor_url(slug: str) -> str:
    """The editor page of a document."""
    return reverse("editor", args=[slug])


@require_safe
@vary_on_headers("HX-Request")
def graph_list(request: HtmxHttpRequest) -> HttpResponse:
    search = request.GET.get("q", "")
    archived = request.GET.get("archived") == "1"
    cursor = request.GET.get("cursor") or None
    # A cursor this server did not hand out is the plain 400 of views.errors.service_error_page.
    page = documents.list_documents(
        search=search, cursor=cursor, limit=DEFAULT_LIMIT, archived=archived
    )
    kept = {"q": search.strip(), "archived": "1" if archived else ""}
    template = "graphs/list.html#rows" if is_fragment_request(request) else "graphs/list.html"
    return render(
        request,
        template,
        {
            "documents": page.items,
            "search": search,
            "archived": archived,
            "next": page.next,
            "paged": cursor is not None,
            "list_query": urlencode({key: value for key, value in kept.items() if value}),
            "can_author": can_author(request.user),
        },
    )


def _require_author(request: HttpRequest) -> None:
    if not can_author(request.user):
        raise PermissionDenied("Creating documents needs the authors role.")


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def new_graph(request: HtmxHttpRequest) -> HttpResponse:
    _require_author(request)
    agent_list = agents.list_agents(limit=MAX_LIMIT).items
    form = NewGraphForm(request.POST or None, agents=agent_list)
    if request.method == "POST" and form.is_valid():
        title, text = form.cleaned_data["title"], form.draft_text()
        try:
            document = documents.new_document(request.user, title=title, text=text)
        except InvalidRequest as error:
            form.add_error("title", str(error))
        else:
            return go_to(request, editor_url(document.slug))
    template = "graphs/new.html#form" if request.htmx else "graphs/new.html"
    return render(request, template, {"form": form, "agents": agent_list})


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def import_graph(request: HtmxHttpRequest) -> HttpResponse:
    _require_author(request)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        title, text = form.cleaned_data["document_title"], form.cleaned_data["document_text"]
        try:
            imported = documents.import_document(request.user, title=title, text=text)
        except InvalidRequest as error:
            form.add_error(None, str(error))
        else:
            return render(
                request,
                "graphs/imported.html",
                {
                    "document": imported.document,
                    "editor_url": editor_url(imported.document.slug),
                    "parse_error": imported.parse_error,
                    "existing": imported.existing,
                    "digest_hex": hex_digits(imported.graph) if imported.graph else None,
                },
            )
    template = "graphs/import.html#form" if request.htmx else "graphs/import.html"
    return render(request, template, {"form": form})
