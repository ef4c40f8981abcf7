"""Runs (spec 06, *Runs*): the list, a run's page and its live fragment, **Start run** (from a
graph's permanent page), **Abandon run**, **Wake now** and the input of a signal wait. The
parts of a run's page fetched on demand are in ``editor.views.run_details``; **Retry from
here** and **Run again** in ``editor.views.forks``.

The run page's ``#run-live`` fragment (status and canvas) is fetched again whenever the page's
event stream says the run's log grew (``editor.views.live``), with the new events for the top
of the timeline out of band; the answer for a finished run takes that trigger away. A fetch
that finds no new event is answered ``204``, which htmx leaves unswapped. A run that rests
(parked or finished) costs its page no request at all.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.forms import StartRunForm
from editor.graph import GraphHash, hex_digits
from editor.services import runs
from editor.services.access import can_operate
from editor.services.documents import graphs, samples
from editor.services.errors import (
    AlreadyFinished,
    InvalidRequest,
    NotRunnable,
    RunBusy,
    UnknownDocument,
    WrongState,
)
from editor.services.numbers import strict_int
from editor.services.runs import filters as run_filters
from editor.services.runs import lists as run_lists
from editor.services.runs import pages as run_pages
from editor.services.runs import signal_waits
from editor.views.graphs import go_to, is_fragment_request
from editor.views.htmx import HtmxHttpRequest


def run_url(run_id: str) -> str:
    """A run's page."""
    return reverse("run", args=[run_id])


@require_safe
@vary_on_headers("HX-Request")
def run_list(request: HtmxHttpRequest) -> HttpResponse:
    context: dict[str, Any] = {
        "states": run_filters.STATES,
        "values": request.GET,
        "labels": request.GET.getlist("label"),
        "problem": None,
        "rows": [],
        "next": None,
    }
    status = 200
    try:
        filters = run_filters.read_run_filter(request.GET)
        context.update(filters=filters, filter_query=urlencode(filters.params()))
        page = run_lists.list_run_rows(filters, cursor=request.GET.get("cursor") or None)
    except InvalidRequest as error:
        context.update(problem=str(error))
        # htmx swaps 200 answers only: the notice is the fragment's answer.
        status = 200 if is_fragment_request(request) else 400
    else:
        context.update(rows=page.rows, next=page.next)
    template = "runs/list.html#rows" if is_fragment_request(request) else "runs/list.html"
    return render(request, template, context, status=status)


def _seen(request: HttpRequest) -> int | None:
    value = request.GET.get("seen", "")
    return strict_int(value, "seen") if value else None


@require_safe
@vary_on_headers("HX-Request")
def run_page(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    fragment = is_fragment_request(request)
    page = run_pages.run_page(str(run_id), seen=_seen(request) if fragment else None)
    if page is None:
        return HttpResponse(status=204)  # nothing new: htmx keeps what it shows
    context = {"page": page, "run": page.run, "can_operate": can_operate(request.user)}
    if fragment:
        # The new events go above the timeline's rows, and a finished run's last answer also
        # takes Abandon run off the page (out of band).
        context["oob"] = True
        context["oob_abandon"] = not page.live
        return render(request, "runs/page.html#live", context)
    return render(request, "runs/page.html", context)


@require_POST
@vary_on_headers("HX-Request")
def abandon_run(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    if not can_operate(request.user):
        raise PermissionDenied("Abandoning runs needs the operators role.")
    reason = request.POST.get("reason", "").strip()
    context: dict[str, Any] = {"run_id": str(run_id), "live": True, "can_operate": True}
    status = 200
    if not reason:
        context["reason_error"] = "Say why the run is abandoned."
    else:
        try:
            runs.abandon(request.user, str(run_id), reason)
        except InvalidRequest:  # the one value a person types here
            context["reason_error"] = "The reason cannot contain the NUL character (U+0000)."
        except (AlreadyFinished, RunBusy) as error:
            context["abandon_message"] = f"Not abandoned: {error}."
            context["live"] = isinstance(error, RunBusy)
            status = 409
        else:
            if not request.htmx:
                return redirect(run_url(str(run_id)))
            context["abandon_message"] = "Run abandoned."
            context["live"] = False
    if request.htmx:
        # htmx does not swap error answers; the message is the answer here.
        return render(request, "runs/page.html#abandon", context)
    return render(request, "runs/abandon.html", context, status=status)


@require_POST
def wake_run(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """**Wake now** on a sleeping run's page (operators): its wait ends here, recorded with
    who, and a worker takes it on; the page's stream shows it move. A run no longer asleep
    (woken meanwhile) is said on the page it comes back to."""
    if not can_operate(request.user):
        raise PermissionDenied("Waking runs needs the operators role.")
    try:
        runs.wake(request.user, str(run_id))
    except WrongState as error:
        context = {"run_id": str(run_id), "message": f"Not woken: {error}."}
        return render(request, "runs/wake.html", context, status=409)
    return redirect(run_url(str(run_id)))


@require_POST
def resume_signal(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """A signal wait's form on the run page (operators, spec 08): the input is checked against
    the recorded schema and recorded as the API's resume records it; the page comes back with
    the run moving on, or with what is wrong beside the input (``400``, nothing recorded), or
    saying the run no longer waits there (``409``)."""
    answer = signal_waits.resume_signal(request.user, str(run_id), request.POST.dict())
    if answer.recorded:
        return redirect(run_url(str(run_id)))
    page = run_pages.run_page(str(run_id))
    assert page is not None  # a whole page is always drawn
    context = {"page": page, "run": page.run, "can_operate": True, "signal_answer": answer}
    return render(request, "runs/page.html", context, status=409 if answer.notice else 400)


@require_POST
@vary_on_headers("HX-Request")
def start_run(request: HtmxHttpRequest, digest: GraphHash) -> HttpResponse:
    if not can_operate(request.user):
        raise PermissionDenied("Starting runs needs the operators role.")
    form = StartRunForm(request.POST)
    graph = graphs.load_graph(digest)
    typed = request.POST.get("input", "")
    fields = samples.input_form(graph, prefix="start", json_text=typed)
    from_fields = request.POST.get("input_from") == "fields"
    context: dict[str, Any] = {
        "hex": hex_digits(digest),
        "start_form": form,
        "can_operate": True,
        "input_form": fields,
    }
    if form.is_valid():
        try:
            value = form.cleaned_data["input"]
            if from_fields:
                value = samples.read_input(graph, request.POST, prefix="start")
            started = runs.start_run(
                request.user,
                digest,
                value,
                document_slug=form.cleaned_data["document"] or None,
            )
        except samples.InvalidInput as refused:
            context["input_form"] = refused.form
        except UnknownDocument:
            form.add_error(None, "The document this page was opened from no longer exists.")
        except NotRunnable as error:
            context["not_runnable"] = error.errors
        except InvalidRequest as error:
            form.add_error("input" if error.field == "input" else None, str(error))
        else:
            return go_to(request, run_url(started.run))
    template = "versions/graph.html#start" if request.htmx else "runs/start.html"
    return render(request, template, context)
