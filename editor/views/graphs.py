"""``/``, ``/new/`` and ``/import/``: the graphs list, **New graph** and **Import JSON**."""

from __future__ import annotations

import contextlib
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from editor.forms import ImportForm, NewGraphForm
from editor.graph import MalformedDocument, graph_hash, hex_digits, parse_document
from editor.services import agents, documents
from editor.services.access import can_author
from editor.services.errors import InvalidRequest, SlugTaken
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT
from editor.views.htmx import HtmxHttpRequest

#: Tried after the derived slug when it is taken: ``slug-2`` … ``slug-99``.
_SLUG_ATTEMPTS = 99


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


def _create(request: HttpRequest, title: str, text: str) -> documents.DocumentInfo:
    """A new document; when the slug of its title is taken, the first free ``slug-n``."""
    base = documents.derive_slug(title)
    for attempt in range(1, _SLUG_ATTEMPTS + 1):
        slug = base if attempt == 1 else f"{base[:60]}-{attempt}"
        with contextlib.suppress(SlugTaken):
            return documents.create_document(request.user, title=title, slug=slug, text=text)
    raise InvalidRequest("too many documents have this title; choose another", "title")


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def new_graph(request: HtmxHttpRequest) -> HttpResponse:
    _require_author(request)
    agent_list = agents.list_agents(limit=MAX_LIMIT).items
    form = NewGraphForm(request.POST or None, agents=agent_list)
    if request.method == "POST" and form.is_valid():
        try:
            document = _create(request, form.cleaned_data["title"], form.draft_text())
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
        text = form.cleaned_data["document_text"]
        try:
            document = _create(request, form.cleaned_data["document_title"], text)
        except InvalidRequest as error:
            form.add_error(None, str(error))
        else:
            parse_error, digest = None, None
            try:
                digest = graph_hash(parse_document(text))
            except MalformedDocument as error:
                parse_error = str(error)
            existing = documents.versions_of_graph(digest) if digest else []
            return render(
                request,
                "graphs/imported.html",
                {
                    "document": document,
                    "editor_url": editor_url(document.slug),
                    "parse_error": parse_error,
                    "existing": existing,
                    "digest_hex": hex_digits(digest) if digest else None,
                },
            )
    template = "graphs/import.html#form" if request.htmx else "graphs/import.html"
    return render(request, template, {"form": form})
