"""``/v1/graph-runs``, ``/v1/runs`` and ``/v1/tools``: starting, reading and resolving runs.

The reference's request bodies, error codes and resume body (spec 05, *Runs*). Nodes never run
in a request: starting or resuming a run records it and hands it to a worker. A run's events
are a JSON page, or with ``Accept: text/event-stream`` (or ``from_seq``) a live stream of
server-sent events (``editor.streams``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.schemas import (
    AbandonIn,
    AbandonOut,
    AgentRunIn,
    ErrorOut,
    EventListOut,
    ReplayOut,
    ResolveIn,
    ResolveOut,
    ResumeIn,
    ResumeOut,
    RunCreatedOut,
    RunGraphOut,
    RunIn,
    RunListOut,
    RunOut,
    ToolListOut,
    WakeIn,
)
from editor.services import runs
from editor.services.errors import InvalidRequest
from editor.services.numbers import strict_int
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT
from editor.services.runs import agent_runs
from editor.services.runs.filters import read_run_filter
from editor.streams.feeds import RunEvents, streaming_response
from editor.streams.lists import json_list_response

router = Router(tags=["runs"])

#: The events operation's two answers, for the OpenAPI document.
EVENTS_RESPONSES: dict[str, Any] = {
    "responses": {
        200: {
            "description": (
                "A page of envelopes (JSON, the default); with `Accept: text/event-stream` or "
                "`from_seq`, server-sent events: `id: <seq>` and `data: <envelope>` per event, "
                'then `event: end` with `data: {"status": …}` once the run rests.'
            ),
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/EventListOut"}},
                "text/event-stream": {"schema": {"type": "string"}},
            },
        }
    }
}


@router.post(
    "/graph-runs",
    response={201: RunCreatedOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut},
    summary="Start a run",
)
def start_run(request: AuthenticatedRequest, payload: RunIn) -> Status[dict[str, Any]]:
    """Start a run of a stored graph; a worker drives it. `404` with the first resolution
    error's code (`unknown_tool`, …) and every one in `details.errors` when a name the graph
    uses is not registered here; `413 payload_too_large` when the input would make the run's
    first event larger than the event cap. Nothing is created then."""
    run = runs.start_run(request.auth, payload.graph_hash, payload.input, payload.labels)
    return Status(201, {"run": run.run, "status": run.state})


def _run_json(run: runs.RunInfo) -> dict[str, Any]:
    return RunOut.from_orm(run).model_dump()


#: ``?label=`` may be given several times (a run carrying all of them is kept).
LABELS = Query(None, description="`key=value`, or a `key` alone; repeat for several")


@router.get("/runs", response={200: RunListOut, 400: ErrorOut}, summary="List runs")
def list_runs(
    request: HttpRequest,
    status: str | None = None,
    kind: str | None = None,
    graph: str | None = None,
    document: str | None = None,
    label: list[str] | None = LABELS,
    person: str | None = None,
    since: str | None = Query(None, alias="from"),
    until: str | None = Query(None, alias="to"),
    test: str | None = None,
    cursor: str | None = None,
    limit: int | None = Query(None, ge=1, le=MAX_LIMIT),
) -> Any:
    """Runs, newest first. `status` keeps one state; `kind=signal` the runs waiting on a
    system (suspended on a signal wait); `graph` one graph's runs (its full hash);
    `document` the runs started from a document (its slug); `label` runs carrying a label,
    `key=value` or a `key` alone, repeated for several; `person` the runs someone started
    (username); `from`/`to` the runs started on or after / on or before a day (`YYYY-MM-DD`,
    UTC); `test=true` the test runs of drafts instead (never listed otherwise). Every one of
    them unless `cursor` or `limit` is given (then a page and its `next`)."""
    filters = read_run_filter(
        {
            "status": status,
            "kind": kind,
            "graph": graph,
            "document": document,
            "label": label or [],
            "person": person,
            "from": since,
            "to": until,
            "test": test,
        },
        state_name="status",
    )
    if cursor is None and limit is None:
        return json_list_response(
            request,
            "runs",
            lambda after, size: runs.list_runs(filters, cursor=after, limit=size),
            _run_json,
        )
    page = runs.list_runs(filters, cursor=cursor, limit=limit or DEFAULT_LIMIT)
    return {"runs": page.items, "next": page.next}


@router.post(
    "/runs",
    response={201: RunCreatedOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut},
    summary="Start an agent run",
)
def start_agent_run(request: AuthenticatedRequest, payload: AgentRunIn) -> Status[dict[str, Any]]:
    """Start a run of a stored agent (the reference's agent run): a run of a one-node graph
    naming the agent, stored like any graph. `404 unknown_agent` when no agent is stored under
    `agent`; otherwise the answers and refusals of `POST /v1/graph-runs`. A `run_id` is refused
    (`400 invalid_request`): this server names every run."""
    if payload.run_id is not None:
        raise InvalidRequest("`run_id` is not taken here: the server names every run", "run_id")
    run = agent_runs.start_agent_run(request.auth, payload.agent, payload.input, payload.labels)
    return Status(201, {"run": run.run, "status": run.state})


@router.get("/runs/{run}", response={200: RunOut, 404: ErrorOut}, summary="Get a run")
def get_run(request: HttpRequest, run: str) -> runs.RunInfo:
    """A run, its status object, the totals of its log and the call it has in flight."""
    return runs.run_detail(run)


def _wants_stream(request: HttpRequest) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def _stream_start(request: HttpRequest, from_seq: int | None) -> int:
    """Where a stream starts: after ``Last-Event-ID`` (a reconnecting browser), else at
    ``from_seq``, else at the first event."""
    last = request.headers.get("Last-Event-ID")
    if last is not None and last.strip():
        return strict_int(last.strip(), "Last-Event-ID") + 1
    return from_seq or 0


@router.get(
    "/runs/{run}/events",
    response={200: EventListOut, 400: ErrorOut, 404: ErrorOut},
    openapi_extra=EVENTS_RESPONSES,
    summary="A run's events",
)
def run_events(
    request: HttpRequest,
    run: str,
    after: int | None = Query(None, ge=-1),
    limit: int = Query(runs.EVENTS_PAGE_LIMIT, ge=1, le=runs.EVENTS_PAGE_LIMIT),
    from_seq: int | None = Query(None, ge=0),
) -> Any:
    """The run's envelopes in `seq` order, after `after` (exclusive): at most `limit` of them
    and at most `GATEHOUSE_EVENTS_PAGE_BYTES` (1 MiB) of payload, and at least one however
    large; `next` is the `after` of the next page. With `Accept: text/event-stream` or
    `from_seq` (inclusive), a live stream instead, resumed after `Last-Event-ID` when a client
    reconnects."""
    if from_seq is None and not _wants_stream(request):
        return HttpResponse(
            runs.run_events(run, after=after, limit=limit), content_type="application/json"
        )
    start = _stream_start(request, from_seq)
    found = runs.get_run(run)  # 404 before anything is streamed
    return streaming_response(request, RunEvents(found.run, start))


@router.get("/runs/{run}/replay", response={200: ReplayOut, 404: ErrorOut}, summary="Replay a run")
def replay_run(request: HttpRequest, run: str) -> dict[str, Any]:
    """The run's state folded from its log alone, executing nothing: its status, the next
    `seq`, its usage and the call it has in flight."""
    return runs.replay(run)


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
def resume_run(
    request: AuthenticatedRequest, run: str, payload: ResumeIn
) -> Status[runs.ResumeOutcome]:
    """Resolve a gate (approvers), raise a budget or reconcile a write (operators). An input
    that breaks the gate's schema is `400 approval_schema_violation` with the node and every
    violation, and records nothing; a run that is not waiting is `409 not_suspended`, saying
    who resolved it and when. Without `input`, a queued or running run is handed to a worker
    again (operators)."""
    given = payload.model_fields_set
    body: dict[str, Any] = {}
    if "input" in given:
        body["input"] = payload.input
    if payload.extend is not None:
        body["extend"] = payload.extend
    if payload.comment is not None:
        body["comment"] = payload.comment
    if payload.node is not None:
        body["node"] = payload.node
        if payload.scope:
            body["scope"] = [list(pair) for pair in payload.scope]
    return Status(202, runs.resume(request.auth, run, body))


@router.post(
    "/runs/{run}/wake",
    response={202: ResumeOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Wake a sleeping run now",
)
def wake_run(
    request: AuthenticatedRequest, run: str, payload: WakeIn
) -> Status[runs.ResumeOutcome]:
    """**Wake now** (operators): end a sleeping run's wait before its `wake_at`; the log
    records who (`SleepCompleted.by`) and why (`comment`). A run that is not sleeping is
    `409 wrong_state`."""
    return Status(202, runs.wake(request.auth, run, payload.comment))


@router.post(
    "/runs/{run}/resolve",
    response={200: ResolveOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Record what a cut-off write did",
)
def resolve_run(request: AuthenticatedRequest, run: str, payload: ResolveIn) -> runs.ResolveOutcome:
    """For a run that needs reconciliation (operators): record `output` as the result of the
    write that was cut off, and let a worker drive on. `409 wrong_state` when the run has no
    such write; nothing is recorded then."""
    return runs.resolve(request.auth, run, payload.output)


@router.post(
    "/runs/{run}/abandon",
    response={200: AbandonOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Abandon a run",
)
def abandon_run(
    request: AuthenticatedRequest, run: str, payload: AbandonIn | None = None
) -> runs.AbandonOutcome:
    """Stop a run that has not finished: the receipt names the `seq` of its `RunAbandoned`.
    `409 wrong_state` (`details.reason`: `already_finished`) when it has finished."""
    reason = payload.reason if payload is not None else None
    return runs.abandon(request.auth, run, reason)


@router.get("/tools", response={200: ToolListOut}, summary="List tools")
def list_tools(request: HttpRequest) -> dict[str, Any]:
    """Every tool registered on this installation, with its schemas and effect."""
    return {"tools": runs.list_tools()}
