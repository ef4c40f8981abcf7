"""**Retry from here** and **Run again** on a run's page (spec 06, *Runs*; the forks of spec 05).

**Retry from here** posts the node to start again from. When the segment it would run again
holds recorded writes, the answer lists them, each to acknowledge with a checkbox, and nothing
is created until they are; once created, the browser goes to the new run's page. **Run again**
starts a new run of the same graph with the same input and labels and goes to its page.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from editor.graph.jsonio import pretty_json
from editor.services.errors import (
    ForkHazard,
    InvalidForkNode,
    InvalidRequest,
    NotRunnable,
    OriginNeedsReconciliation,
    WrongState,
)
from editor.services.numbers import InvalidNumber, strict_int
from editor.services.runs import forks
from editor.views.graphs import go_to
from editor.views.htmx import HtmxHttpRequest
from editor.views.runs import run_url

__all__ = ["fork_run", "run_again"]


def _acknowledged(request: HttpRequest) -> list[int]:
    return [
        strict_int(value, "acknowledge", maximum=2**31 - 1)
        for value in request.POST.getlist("acknowledge")[:10_000]
    ]


@require_POST
@vary_on_headers("HX-Request")
def fork_run(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    node = request.POST.get("from_node", "")
    context: dict[str, Any] = {"run_id": str(run_id), "node": node}
    status = 200
    try:
        made = forks.fork_run(request.user, str(run_id), node, _acknowledged(request))
    except ForkHazard as error:
        context["writes"] = [
            {**write, "input_text": pretty_json(write["input"])} for write in error.writes
        ]
        if request.POST.getlist("acknowledge"):
            context["fork_problem"] = "Acknowledge every write below to retry from here."
        status = 409
    except InvalidNumber:
        context["fork_problem"] = "The acknowledgements of this form were not whole numbers."
        status = 400
    except (InvalidForkNode, OriginNeedsReconciliation, WrongState, NotRunnable) as error:
        context["fork_problem"] = f"Not retried: {error}."
        status = 409
    except InvalidRequest as error:  # pragma: no cover - every refusal above is one
        context["fork_problem"] = f"Not retried: {error}."
        status = 400
    else:
        return go_to(request, run_url(made.run))
    if request.htmx:
        # htmx swaps only successful answers: the form with the writes to acknowledge is one.
        return render(request, "runs/_retry.html", context)
    return render(request, "runs/fork.html", context, status=status)


@require_POST
@vary_on_headers("HX-Request")
def run_again(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    try:
        started = forks.run_again(request.user, str(run_id))
    except (NotRunnable, InvalidRequest) as error:
        return render(request, "runs/again.html", {"run_id": str(run_id), "problem": str(error)})
    return go_to(request, run_url(started.run))
