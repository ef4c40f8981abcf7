"""The parts of a run's page fetched on demand (spec 06, *Runs*): the timeline's older pages
(**Load older**), one event's whole payload, **Download log**, and a node's detail.

Each answers htmx with its fragment and a plain request with a page of its own, so every link
works without script too.
"""

from __future__ import annotations

import uuid

from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services.access import can_operate
from editor.services.errors import InvalidRequest
from editor.services.numbers import InvalidNumber, strict_int
from editor.services.runs import nodes as run_nodes
from editor.services.runs import timeline as run_timeline
from editor.services.runs.rows import run_row
from editor.streams.logs import log_response
from editor.views.graphs import is_fragment_request
from editor.views.htmx import HtmxHttpRequest

__all__ = ["event_payload", "node_detail", "older_events", "payload_download", "run_log"]

#: The largest position a log stores (the column is a 32-bit integer on PostgreSQL).
SEQ_MAX = 2**31 - 1


@require_safe
@vary_on_headers("HX-Request")
def older_events(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """``?before=<seq>``: the page of events before that one, newest first."""
    before = strict_int(request.GET.get("before", ""), "before", maximum=SEQ_MAX)
    timeline = run_timeline.older(str(run_id), before)
    context = {"timeline": timeline, "run_id": str(run_id), "before": before}
    template = "runs/events.html#older" if is_fragment_request(request) else "runs/events.html"
    return render(request, template, context)


def _position(seq: str) -> int:
    try:
        return strict_int(seq, "seq", maximum=SEQ_MAX)
    except InvalidNumber:
        raise Http404("The run's log has no event at this position.") from None


@require_safe
@vary_on_headers("HX-Request")
def event_payload(request: HtmxHttpRequest, run_id: uuid.UUID, seq: str) -> HttpResponse:
    """One event's payload: whole, or for a large one its start and a link to the whole."""
    found = run_timeline.event_payload(str(run_id), _position(seq))
    if found is None:
        raise Http404("The run's log has no event at this position.")
    context = {"found": found, "run_id": str(run_id)}
    template = "runs/event.html#payload" if is_fragment_request(request) else "runs/event.html"
    return render(request, template, context)


@require_safe
def payload_download(request: HttpRequest, run_id: uuid.UUID, seq: str) -> HttpResponse:
    """One event's whole payload as JSON, a download."""
    body = run_timeline.payload_download(str(run_id), _position(seq))
    if body is None:
        raise Http404("The run's log has no event at this position.")
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run_id}-event-{seq}.json"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_safe
def run_log(request: HttpRequest, run_id: uuid.UUID) -> StreamingHttpResponse:
    """**Download log**: the events as JSON lines, as stored, streamed."""
    run = run_row(str(run_id))
    return log_response(request, str(run.id), f"run-{run.id}.jsonl")


@require_safe
@vary_on_headers("HX-Request")
def node_detail(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """``?node=<id>`` (and ``in=<owner>`` for each subgraph body it sits in): the node's
    detail."""
    node = request.GET.get("node", "")
    if not node:
        return HttpResponseBadRequest("Name a node: ?node=<id>.", content_type="text/plain")
    try:
        detail = run_nodes.node_detail(str(run_id), node, request.GET.getlist("in"))
    except InvalidRequest:
        raise Http404("The graph of this run has no such node.") from None
    context = {"detail": detail, "can_operate": can_operate(request.user)}
    template = "runs/_node.html" if is_fragment_request(request) else "runs/node.html"
    return render(request, template, context)
