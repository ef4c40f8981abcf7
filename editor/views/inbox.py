"""The approval inbox (spec 06): pending cards, resolving one in place, the **Resolved** tab,
and the count in the navigation bar.

Each card is its own fragment (``inbox/page.html#card``): its form posts with htmx and the
answer replaces the card (``outerHTML``) — by the receipt, by the card with its errors (``200``,
so htmx swaps it), or by the note that someone else was first. Without script the form posts
normally and the same card is shown on a page of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services import inbox
from editor.services.errors import InvalidRequest
from editor.services.inbox import cards as inbox_cards
from editor.services.inbox import log as inbox_log
from editor.services.inbox.filters import NO_FILTER, InboxFilter, read_filter
from editor.services.paging import Page
from editor.views.graphs import is_fragment_request
from editor.views.htmx import HtmxHttpRequest


def nav_context(request: HttpRequest) -> dict[str, Any]:
    """The navigation bar's inbox count, for every page: a callable, so the one ``COUNT``
    runs only when a template shows it (signed-in pages)."""
    return {"inbox_count": inbox.pending_count}


@require_safe
def inbox_count(request: HttpRequest) -> HttpResponse:
    """The count alone (the navigation bar's fragment; pages hear of changes on their stream,
    ``editor.views.live``)."""
    return render(request, "inbox/_count.html", {"inbox_count": inbox.pending_count()})


def _tab(
    request: HtmxHttpRequest, tab: str, read: Callable[[InboxFilter, str | None], Page[Any]]
) -> tuple[dict[str, Any], int]:
    """What a tab shows: its filters (or the problem with them), what the form shows, and the
    page of ``items`` that ``read`` finds (none when the filters or the cursor cannot be read);
    with the status of the answer: ``400`` for a page whose filters or cursor cannot be read,
    while an htmx fragment says so with ``200``, which htmx swaps in (it discards 4xx bodies)."""
    context: dict[str, Any] = {"problem": None, "tab": tab, "values": request.GET}
    context.update(items=[], next=None)
    try:
        filters = read_filter(request.GET)
    except InvalidRequest as error:
        context["problem"] = str(error)
        filters = NO_FILTER
    params = filters.params()
    context.update(filters=filters, filter_query=urlencode(params), graph=params.get("graph", ""))
    if context["problem"] is None:
        try:
            page = read(filters, request.GET.get("cursor") or None)
        except InvalidRequest as error:
            context["problem"] = str(error)
        else:
            context.update(items=page.items, next=page.next)
    status = 400 if context["problem"] and not is_fragment_request(request) else 200
    return context, status


@require_safe
@vary_on_headers("HX-Request")
def inbox_page(request: HtmxHttpRequest) -> HttpResponse:
    context, status = _tab(
        request, "pending", lambda f, cursor: inbox.pending_items(f, cursor=cursor)
    )
    context["cards"] = inbox_cards.cards(request.user, context.pop("items"))
    context["choices"] = inbox.graph_choices()
    template = "inbox/page.html#cards" if is_fragment_request(request) else "inbox/page.html"
    return render(request, template, context, status=status)


@require_POST
@vary_on_headers("HX-Request")
def resolve(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    # A crafted post (a card always sends the scope and seq it was drawn with) is a 400.
    card = inbox_cards.resolve_card(request.user, str(run_id), request.POST.dict())
    if request.htmx:
        return render(request, "inbox/page.html#card", {"card": card})
    # The approval policy's refusal (four eyes, …) is the card saying why, as a 403 page.
    status = 403 if card.refusal else 200
    return render(request, "inbox/resolve.html", {"card": card}, status=status)


@require_safe
@vary_on_headers("HX-Request")
def resolved(request: HtmxHttpRequest) -> HttpResponse:
    context, status = _tab(
        request, "resolved", lambda f, cursor: inbox_log.decision_log(f, cursor=cursor)
    )
    context["decisions"] = context.pop("items")
    template = (
        "inbox/resolved.html#decisions" if is_fragment_request(request) else "inbox/resolved.html"
    )
    return render(request, template, context, status=status)
