"""The approval inbox (spec 06): pending cards, resolving one in place, the **Resolved** tab,
and the count in the navigation bar.

Each card is its own fragment (``inbox/page.html#card``): its form posts with htmx and the
answer replaces the card (``outerHTML``) — by the receipt, by the card with its errors (``200``,
so htmx swaps it), or by the note that someone else was first. Without script the form posts
normally and the same card is shown on a page of its own.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services import inbox, inbox_cards
from editor.services.errors import InvalidRequest, NotAllowed, UnknownRun
from editor.views.graphs import is_fragment_request

NOT_ALLOWED = "Resolving a gate needs the approvers role; budgets and reconciliations, operators."


def nav_context(request: HttpRequest) -> dict[str, Any]:
    """The navigation bar's inbox count, for every page: a callable, so the one ``COUNT``
    runs only when a template shows it (signed-in pages)."""
    return {"inbox_count": inbox.pending_count}


@require_safe
def inbox_count(request: HttpRequest) -> HttpResponse:
    """The count alone (the navigation bar's fragment; pages hear of changes on their stream,
    ``editor.views.live``)."""
    return render(request, "inbox/_count.html", {"inbox_count": inbox.pending_count()})


@require_safe
@vary_on_headers("HX-Request")
def inbox_page(request: HttpRequest) -> HttpResponse:
    graph = request.GET.get("graph", "")
    context: dict[str, Any] = {"graph": graph, "problem": None, "tab": "pending"}
    status = 200
    try:
        page = inbox.pending_items(graph=graph or None, cursor=request.GET.get("cursor") or None)
    except InvalidRequest as error:
        context.update(cards=[], next=None, problem=str(error))
        status = 400
    else:
        context.update(cards=inbox_cards.cards(request.user, page.items), next=page.next)
    context["choices"] = inbox.graph_choices()
    template = "inbox/page.html#cards" if is_fragment_request(request) else "inbox/page.html"
    return render(request, template, context, status=status)


@require_POST
@vary_on_headers("HX-Request")
def resolve(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    try:
        card = inbox_cards.resolve_card(request.user, str(run_id), request.POST)
    except NotAllowed:
        raise PermissionDenied(NOT_ALLOWED) from None
    except UnknownRun:
        raise Http404("No run has this id.") from None
    if request.htmx:
        return render(request, "inbox/page.html#card", {"card": card})
    return render(request, "inbox/resolve.html", {"card": card})


@require_safe
@vary_on_headers("HX-Request")
def resolved(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {"problem": None, "tab": "resolved"}
    status = 200
    try:
        page = inbox.decision_log(cursor=request.GET.get("cursor") or None)
    except InvalidRequest as error:
        context.update(decisions=[], next=None, problem=str(error))
        status = 400
    else:
        context.update(decisions=page.items, next=page.next)
    return render(request, "inbox/resolved.html", context, status=status)
