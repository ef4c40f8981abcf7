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
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services import inbox, inbox_cards, inbox_log
from editor.services.errors import InvalidRequest
from editor.services.inbox_filters import NO_FILTER, InboxFilter, read_filter
from editor.views.graphs import is_fragment_request


def nav_context(request: HttpRequest) -> dict[str, Any]:
    """The navigation bar's inbox count, for every page: a callable, so the one ``COUNT``
    runs only when a template shows it (signed-in pages)."""
    return {"inbox_count": inbox.pending_count}


@require_safe
def inbox_count(request: HttpRequest) -> HttpResponse:
    """The count alone (the navigation bar's fragment; pages hear of changes on their stream,
    ``editor.views.live``)."""
    return render(request, "inbox/_count.html", {"inbox_count": inbox.pending_count()})


def _filter_context(request: HttpRequest, tab: str) -> tuple[InboxFilter, dict[str, Any]]:
    """The filters of the request (or the problem with them), and what the form shows."""
    context: dict[str, Any] = {"problem": None, "tab": tab, "values": request.GET}
    try:
        filters = read_filter(request.GET)
    except InvalidRequest as error:
        context["problem"] = str(error)
        filters = NO_FILTER
    params = filters.params()
    context.update(filters=filters, filter_query=urlencode(params), graph=params.get("graph", ""))
    return filters, context


def _status(request: HttpRequest, context: dict[str, Any]) -> int:
    """``400`` for a page whose filters or cursor cannot be read; an htmx fragment says so
    with ``200``, which htmx swaps in (it discards 4xx bodies)."""
    return 400 if context["problem"] and not is_fragment_request(request) else 200


@require_safe
@vary_on_headers("HX-Request")
def inbox_page(request: HttpRequest) -> HttpResponse:
    filters, context = _filter_context(request, "pending")
    status = _status(request, context)
    if context["problem"]:
        context.update(cards=[], next=None)
    else:
        try:
            page = inbox.pending_items(filters, cursor=request.GET.get("cursor") or None)
        except InvalidRequest as error:
            context.update(cards=[], next=None, problem=str(error))
            status = _status(request, context)
        else:
            context.update(cards=inbox_cards.cards(request.user, page.items), next=page.next)
    context["choices"] = inbox.graph_choices()
    template = "inbox/page.html#cards" if is_fragment_request(request) else "inbox/page.html"
    return render(request, template, context, status=status)


@require_POST
@vary_on_headers("HX-Request")
def resolve(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    # A crafted post (a card always sends the scope and seq it was drawn with) is a 400.
    card = inbox_cards.resolve_card(request.user, str(run_id), request.POST)
    if request.htmx:
        return render(request, "inbox/page.html#card", {"card": card})
    return render(request, "inbox/resolve.html", {"card": card})


@require_safe
@vary_on_headers("HX-Request")
def resolved(request: HttpRequest) -> HttpResponse:
    filters, context = _filter_context(request, "resolved")
    status = _status(request, context)
    if context["problem"]:
        context.update(decisions=[], next=None)
    else:
        try:
            page = inbox_log.decision_log(filters, cursor=request.GET.get("cursor") or None)
        except InvalidRequest as error:
            context.update(decisions=[], next=None, problem=str(error))
            status = _status(request, context)
        else:
            context.update(decisions=page.items, next=page.next)
    template = (
        "inbox/resolved.html#decisions" if is_fragment_request(request) else "inbox/resolved.html"
    )
    return render(request, template, context, status=status)
