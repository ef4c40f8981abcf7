"""``POST /v1/runs/{id}/fork`` and ``GET /v1/runs/{id}/forks``: forks in the reference's shapes
(its Python client's ``ForkPreview``, ``ForkResult`` and ``ForksIndex``; spec 05)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.schemas import ErrorOut
from editor.services.runs import forks

router = Router(tags=["runs"])

#: Writes one fork may acknowledge (a segment holds at most the log's events).
MAX_ACKNOWLEDGED = 100_000


class ForkIn(Schema):
    #: The node to start again from: one the origin entered at the top of its graph.
    from_node: str = Field(..., min_length=1, max_length=1000)
    #: Only say what the fork would hold and run again; create nothing.
    dry_run: bool = False
    #: The ``seq`` of each recorded write the fork may run again.
    acknowledge_writes: list[int] | None = Field(None, max_length=MAX_ACKNOWLEDGED)


class RecordedWriteOut(Schema):
    #: Where the write's ``ToolCallRequested`` is in the origin's log.
    seq: int
    tool: str | None
    input: Any = None
    #: Always ``null``: a fork's calls get keys of their own, so nothing folds the two calls.
    idempotency_key: str | None = None
    recorded_at: str


class ForkPreviewOut(Schema):
    origin: str
    from_node: str
    through_seq: int
    graph_hash: str
    prefix_event_count: int
    writes: list[RecordedWriteOut]
    unacknowledged_writes: list[int]
    would_proceed: bool


class ForkOriginOut(Schema):
    run_id: str
    through_seq: int
    from_node: str
    graph_hash: str
    acknowledged_writes: list[int]


class ForkResultOut(Schema):
    run: str
    status: str
    forked_from: ForkOriginOut


class ForkEntryOut(Schema):
    run: str
    from_node: str | None
    through_seq: int | None
    acknowledged_writes: list[int]
    status: str
    created_at: datetime


class ForksOut(Schema):
    run: str
    #: Read from what each fork recorded of its origin (the origin never changes).
    derived: bool
    forks: list[ForkEntryOut]


@router.post(
    "/runs/{run}/fork",
    response={
        200: ForkPreviewOut,
        201: ForkResultOut,
        400: ErrorOut,
        403: ErrorOut,
        404: ErrorOut,
        409: ErrorOut,
    },
    summary="Fork a run from a node",
)
def fork_run(request: AuthenticatedRequest, run: str, payload: ForkIn) -> Status[Any]:
    """A new run of the same graph, input and labels that opens with this run's log up to
    `from_node`'s entry (replayed, not executed again) and is driven from that node
    (operators). With `dry_run`, `200` and what the fork would hold: the recorded `write`
    calls it would run again, and which are not acknowledged. `409 write_replay_hazard`
    (`details.writes`) while a write is not acknowledged; `400 invalid_fork_node` for a node
    the run did not enter at the top of its graph; `409 origin_needs_reconciliation` for a
    run waiting for a cut-off write; `409 wrong_state` for a run still queued or running.
    Nothing is created then."""
    acknowledged = payload.acknowledge_writes or []
    if payload.dry_run:
        preview = forks.preview_fork(request.auth, run, payload.from_node, acknowledged)
        return Status(200, preview)
    made = forks.fork_run(request.auth, run, payload.from_node, acknowledged)
    return Status(201, {"run": made.run, "status": made.status, "forked_from": made.forked_from})


@router.get("/runs/{run}/forks", response={200: ForksOut, 404: ErrorOut}, summary="A run's forks")
def list_forks(request: HttpRequest, run: str) -> dict[str, Any]:
    """Every run forked from this one, oldest first."""
    return forks.list_forks(run)
