"""The approval inbox (spec 06; ``docs/inbox.md``): the views **Mine**, **My groups** and
**All** of the waiting cards, resolving one in place, the decision log (**Resolved**) and its
exports, and the count in the navigation bar (the cards the person may decide now).

Each card is its own fragment (``inbox/page.html#card``): its form posts with htmx and the
answer replaces the card (``outerHTML``) — by the receipt, by the card with its errors (``200``,
so htmx swaps it), or by the note that someone else was first. Without script the form posts
normally and the same card is shown on a page of its own. Claims and deciding several cards at
once are :mod:`editor.views.inbox_actions`.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services import inbox
from editor.services.errors import InvalidRequest
from editor.services.inbox import cards as inbox_cards
from editor.services.inbox import exports, queue
from editor.services.inbox import log as inbox_log
from editor.services.inbox.filters import NO_FILTER, InboxFilter, read_filter
from editor.services.paging import Page
from editor.streams.lists import paged_response
from editor.views.graphs import is_fragment_request
from editor.views.htmx import HtmxHttpRequest

#: The views' names on the page's tabs.
VIEW_NAMES = {"mine": "Mine", "groups": "My groups", "all": "All"}


def nav_context(request: HttpRequest) -> dict[str, Any]:
    """The navigation bar's inbox count, for every page: the cards this person may decide now
    (**Mine**). A callable, so its queries run only when a template shows it (signed-in
    pages)."""
    return {"inbox_count": functools.partial(_mine_count, request)}


def _mine_count(request: HttpRequest) -> int:
    # The inbox page has read who the person is already (its view): not again for the count.
    return queue.mine_count(request.user, getattr(request, "inbox_person", None))


@require_safe
def inbox_count(request: HttpRequest) -> HttpResponse:
    """The count alone (the navigation bar's fragment; pages hear of changes on their stream,
    ``editor.views.live``)."""
    count = queue.mine_count(request.user)
    return render(request, "inbox/_count.html", {"inbox_count": count})


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


def _views(person: queue.Person) -> list[tuple[str, str]]:
    """The tabs this person is offered: **All** is an operator's."""
    return [
        (view, VIEW_NAMES[view])
        for view in queue.VIEWS
        if view not in queue.OPERATORS_ONLY or person.operator
    ]


@require_safe
@vary_on_headers("HX-Request")
def inbox_page(request: HtmxHttpRequest) -> HttpResponse:
    """A view of the waiting cards (``?view=``: ``mine`` by default). A link to one run's
    cards (``?run=``, from its page or an email) shows them all, whichever view lists them."""
    person = queue.person_of(request.user)
    request.inbox_person = person  # type: ignore[attr-defined]  # the navigation bar's count
    asked = request.GET.get("view", "").strip()
    only_run = not asked and bool(request.GET.get("run", "").strip())
    view = "all" if only_run else queue.read_view(asked, person)

    def read(filters: InboxFilter, cursor: str | None) -> Page[Any]:
        if only_run and filters.run is None:
            raise InvalidRequest("`run` must be a run id", "run")
        return queue.waiting_cards(request.user, view, filters, cursor=cursor, person=person)

    context, status = _tab(request, "pending", read)
    context["cards"] = inbox_cards.cards(request.user, context.pop("items"), person.decider)
    context.update(
        view="" if only_run else view,
        views=_views(person),
        view_query=urlencode({"view": view}) if asked else "",
    )
    if is_fragment_request(request):  # the list alone (a filter applied, the live list)
        return render(request, "inbox/page.html#cards", context, status=status)
    context["choices"] = inbox.graph_choices()
    return render(request, "inbox/page.html", context, status=status)


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
    """The decision log (``?kind=`` keeps one kind of entry), with links to its exports."""
    kind: str | None = None

    def read(filters: InboxFilter, cursor: str | None) -> Page[Any]:
        nonlocal kind
        kind = inbox_log.read_log_kind(request.GET.get("kind"))
        return inbox_log.decision_log(filters, kind=kind, cursor=cursor)

    context, status = _tab(request, "resolved", read)
    context["decisions"] = context.pop("items")
    person = queue.person_of(request.user)
    request.inbox_person = person  # type: ignore[attr-defined]  # the navigation bar's count
    context["views"] = _views(person)
    context["log_kinds"] = inbox_log.LOG_KINDS
    context["kind"] = kind or ""
    query = {**dict(request.GET.items())}
    query.pop("cursor", None)
    if kind:
        context["filter_query"] = "&".join(
            part for part in (context["filter_query"], urlencode({"kind": kind})) if part
        )
    context["export_query"] = urlencode({k: v for k, v in query.items() if v})
    template = (
        "inbox/resolved.html#decisions" if is_fragment_request(request) else "inbox/resolved.html"
    )
    return render(request, template, context, status=status)


@require_safe
def export(request: HttpRequest, format_name: str) -> HttpResponse | StreamingHttpResponse:
    """The decision log that the filters and ``kind`` keep, as CSV or JSON lines, streamed a
    page at a time (``editor.services.inbox.exports``)."""
    filters = read_filter(request.GET)
    kind = inbox_log.read_log_kind(request.GET.get("kind"))
    return paged_response(
        request,
        exports.header(format_name),
        lambda cursor: exports.export_page(format_name, filters, kind, cursor),
        exports.FORMATS[format_name],
        f"decision-log.{format_name}",
    )
