"""``/v1/graph-runs``, ``/v1/runs`` and ``/v1/tools``: starting, reading and resolving runs.

The reference's request bodies, error codes and resume body (spec 05, *Runs*). Nodes never run
in a request: starting or resuming a run records it and hands it to a worker.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from editor.api.schemas import (
    AbandonIn,
    AbandonOut,
    ErrorOut,
    EventListOut,
    ResumeIn,
    ResumeOut,
    RunCreatedOut,
    RunGraphOut,
    RunIn,
    RunListOut,
    RunOut,
    ToolListOut,
)
from editor.services import runs
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT

router = Router(tags=["runs"])


@router.post(
    "/graph-runs",
    response={201: RunCreatedOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut},
    summary="Start a run",
)
def start_run(request: HttpRequest, payload: RunIn) -> Status[dict[str, Any]]:
    """Start a run of a stored graph; a worker drives it. `404` with the first resolution
    error's code (`unknown_tool`, …) and every one in `details.errors` when a name the graph
    uses is not registered here; `413 payload_too_large` when the input would make the run's
    first event larger than the event cap. Nothing is created then."""
    run = runs.start_run(request.auth, payload.graph_hash, payload.input, payload.labels)
    return Status(201, {"run": run.run, "status": run.state})


@router.get("/runs", response={200: RunListOut, 400: ErrorOut}, summary="List runs")
def list_runs(
    request: HttpRequest,
    status: str | None = None,
    graph: str | None = None,
    cursor: str | None = None,
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
) -> dict[str, Any]:
    """Runs, newest first; `status` keeps the runs in one state, `graph` one graph's runs."""
    page = runs.list_runs(status=status, graph=graph, cursor=cursor, limit=limit)
    return {"runs": page.items, "next": page.next}


@router.get("/runs/{run}", response={200: RunOut, 404: ErrorOut}, summary="Get a run")
def get_run(request: HttpRequest, run: str) -> runs.RunInfo:
    """A run and its status object."""
    return runs.get_run(run)


@router.get(
    "/runs/{run}/events",
    response={200: EventListOut, 400: ErrorOut, 404: ErrorOut},
    summary="A run's events",
)
def run_events(
    request: HttpRequest,
    run: str,
    after: int | None = Query(None, ge=-1),
    limit: int = Query(runs.EVENTS_PAGE_LIMIT, ge=1, le=runs.EVENTS_PAGE_LIMIT),
) -> runs.EventPage:
    """The run's envelopes in `seq` order, after `after` (exclusive); `next` is the `after`
    of the next page."""
    return runs.run_events(run, after=after, limit=limit)


@router.get(
    "/runs/{run}/graph", response={200: RunGraphOut, 404: ErrorOut}, summary="A run's graph"
)
def run_graph(request: HttpRequest, run: str) -> dict[str, Any]:
    """Where the run has been: each node it reached, and how it left it."""
    return runs.run_graph(run)


@router.post(
    "/runs/{run}/resume",
    response={202: ResumeOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Resolve a parked run",
)
def resume_run(request: HttpRequest, run: str, payload: ResumeIn) -> Status[runs.ResumeOutcome]:
    """Resolve a gate (approvers), raise a budget or reconcile a write (operators). An input
    that breaks the schema is `400` with every violation and records nothing; a run that is
    not waiting is `409 not_suspended`, saying who resolved it and when."""
    body: dict[str, Any] = {"input": payload.input}
    if payload.comment is not None:
        body["comment"] = payload.comment
    if payload.node is not None:
        body["node"] = payload.node
        if payload.scope:
            body["scope"] = [list(pair) for pair in payload.scope]
    return Status(202, runs.resume(request.auth, run, body))


@router.post(
    "/runs/{run}/abandon",
    response={200: AbandonOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Abandon a run",
)
def abandon_run(
    request: HttpRequest, run: str, payload: AbandonIn | None = None
) -> runs.AbandonOutcome:
    """Stop a run that has not finished; `409 already_finished` when it has."""
    reason = payload.reason if payload is not None else None
    return runs.abandon(request.auth, run, reason)


@router.get("/tools", response={200: ToolListOut}, summary="List tools")
def list_tools(request: HttpRequest) -> dict[str, Any]:
    """Every tool registered on this installation, with its schemas and effect."""
    return {"tools": runs.list_tools()}
