"""Forks and **Run again** (spec 05, ``POST /v1/runs/{id}/fork`` and ``GET /v1/runs/{id}/forks``;
spec 06, the run page's **Retry from here**).

A fork is a new run of the same graph, input and labels that opens with its origin's log up to
a node and is driven from that node (:mod:`editor.engine.forks` plans it and builds its first
events; this module checks who asks, stores the run and hands it to a worker). **Run again** is
a new run of the same graph with the same input and labels, started afresh.

*Operators* fork and run again (they start runs); anyone signed in lists a run's forks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from editor.drives import enqueue_run
from editor.engine import ForkPlan, fork_events, plan_fork, resolve_names
from editor.engine import errors as engine
from editor.engine.ports import Envelope, RunRecord
from editor.engine.states import RunState
from editor.models import Run
from editor.services import quotas
from editor.services.access import ActingUser, author_of, can_operate
from editor.services.documents import run_policies
from editor.services.documents.graphs import load_graph
from editor.services.errors import (
    ForkHazard,
    InvalidForkNode,
    NotAllowed,
    NotRunnable,
    OriginNeedsReconciliation,
    UnknownRun,
    WrongState,
)
from editor.services.installation import installation
from editor.services.runs import TestOf, start_run
from editor.services.runs.rows import RunInfo, info, run_row, store

__all__ = [
    "ForkOutcome",
    "fork_run",
    "list_forks",
    "origin_of",
    "plan_of",
    "preview_fork",
    "run_again",
    "store_fork",
]


@dataclass(frozen=True, slots=True)
class ForkOutcome:
    """A fork made: the new run, its state, and the origin its first event records."""

    run: str
    status: str
    forked_from: dict[str, Any]


def _origin(user: ActingUser, run_id: str) -> tuple[Run, RunRecord]:
    if not can_operate(user):
        raise NotAllowed()
    row = run_row(run_id)  # UnknownRun
    return row, store().load_run(str(row.id))


def _plan(record: RunRecord, from_node: str, acknowledged: Iterable[int]) -> ForkPlan:
    try:
        return plan_fork(record, from_node, acknowledged)
    except engine.InvalidForkNode as error:
        raise InvalidForkNode(error.node, str(error)) from None
    except engine.OriginNeedsReconciliation as error:
        raise OriginNeedsReconciliation(str(error), error.intent) from None
    except engine.OriginMoving as error:
        raise WrongState(error.state, str(error)) from None


def preview_fork(
    user: ActingUser, run_id: str, from_node: str, acknowledged: Iterable[int] = ()
) -> dict[str, Any]:
    """What a fork of ``run_id`` from ``from_node`` would hold and run again (the reference
    client's ``ForkPreview``); nothing is created. The refusals are a fork's own."""
    _row, record = _origin(user, run_id)
    return _plan(record, from_node, acknowledged).preview()


def fork_run(
    user: ActingUser, run_id: str, from_node: str, acknowledged: Iterable[int] = ()
) -> ForkOutcome:
    """Fork ``run_id`` from ``from_node``: store the new run with its opening events and hand it
    to a worker. Refused, with nothing created, for a node that is no boundary the origin
    reached (``InvalidForkNode``), an origin waiting for a reconciliation or still moving, a
    graph that no longer runs here (``NotRunnable``), and recorded writes the fork would run
    again without their acknowledgement (``ForkHazard``)."""
    origin, record = _origin(user, run_id)
    plan = _plan(record, from_node, acknowledged)
    # A fork of a test run is a test run of the same revision, with the same pins: it stays
    # out of the inbox and the default runs list as its origin does.
    test = None
    if origin.test_revision is not None:
        test = TestOf(origin.test_revision, dict(origin.test_pins or {}), origin.test_node or None)
    return store_fork(user, origin, record, plan, graph_hash=record.graph_hash, test=test)


def origin_of(run_id: str) -> tuple[Run, RunRecord]:
    """A fork's origin and its log, for a caller that checked who asks
    (:mod:`editor.services.runs.test_nodes`: **Test from here** is an author's)."""
    row = run_row(run_id)  # UnknownRun
    return row, store().load_run(str(row.id))


def plan_of(record: RunRecord, from_node: str, acknowledged: Iterable[int] = ()) -> ForkPlan:
    """:func:`editor.engine.plan_fork` with its refusals as the services' errors."""
    return _plan(record, from_node, acknowledged)


def store_fork(
    user: Any,
    origin: Run,
    record: RunRecord,
    plan: ForkPlan,
    *,
    graph_hash: str,
    test: TestOf | None,
) -> ForkOutcome:
    """Store the fork ``plan`` describes as a run of ``graph_hash`` (its origin's graph, or for
    **Test from here** the draft's) and hand it to a worker. The opening event names the graph
    the fork runs; ``forked_from`` keeps the origin's."""
    child_id = str(uuid.uuid4())
    try:
        events, status = fork_events(plan, record, child_id)
    except engine.WriteReplayHazard as error:
        raise ForkHazard(str(error), error.writes) from None
    if graph_hash != record.graph_hash:
        first = events[0]
        events[0] = replace(first, payload={**first.payload, "graph_hash": graph_hash})
    graph = load_graph(graph_hash)
    problems = resolve_names(graph, installation())
    if problems:
        raise NotRunnable(list(problems))
    forked_from = plan.origin_record()
    # A fork is a run started now: it records the approval policy in force now (the origin
    # keeps its own), as a test run's fork records none.
    policy = None
    if test is None:
        policy = run_policies.bound_policy(origin.document, graph_hash, graph)
    events = [_with_policy(events[0], policy), *events[1:]]
    with transaction.atomic():
        quotas.count_run_start(user)  # a fork is a run started: GATEHOUSE_RATE_RUNS_PER_HOUR
        Run.objects.create(
            id=uuid.UUID(child_id),
            graph_id=graph_hash,
            document_id=origin.document_id,
            input=record.input,
            labels=dict(record.labels),
            state=RunState.QUEUED.value,
            status={"state": RunState.QUEUED.value},
            created_by=author_of(user),
            origin=origin,
            forked_from=forked_from,
            agent=origin.agent,  # a fork of an agent run is a run of the same agent
            test_revision=test.revision if test is not None else None,
            test_pins=dict(test.pins) if test is not None else {},
            test_node=(test.node or "") if test is not None else "",
            approval_policy=policy,
        )
        store().record(child_id, events, status)
        enqueue_run(child_id)
    return ForkOutcome(child_id, str(status["state"]), forked_from)


def _with_policy(first: Envelope, policy: dict[str, Any] | None) -> Envelope:
    """The fork's ``GraphRunStarted`` with its own approval policy instead of its origin's."""
    payload = {key: value for key, value in first.payload.items() if key != "approval_policy"}
    if policy is not None:
        payload["approval_policy"] = policy
    return replace(first, payload=payload)


def run_again(user: ActingUser, run_id: str) -> RunInfo:
    """A new run of ``run_id``'s graph with the same input and labels (and document), started
    afresh (``start_run``'s checks and refusals)."""
    if not can_operate(user):
        raise NotAllowed()
    row = run_row(run_id)
    return start_run(
        user,
        row.graph_id,
        row.input,
        dict(row.labels or {}),
        document_slug=row.document.slug if row.document is not None else None,
    )


def list_forks(run_id: str) -> dict[str, Any]:
    """``GET /v1/runs/{id}/forks`` (the reference client's ``ForksIndex``): every run forked
    from this one, oldest first. ``derived``: read from what each fork recorded of its origin,
    not from the origin, which never changes."""
    row = run_row(run_id)
    forks = []
    for child in Run.objects.filter(origin=row).order_by("created_at", "id"):
        recorded = child.forked_from or {}
        forks.append(
            {
                "run": str(child.id),
                "from_node": recorded.get("from_node"),
                "through_seq": recorded.get("through_seq"),
                "acknowledged_writes": list(recorded.get("acknowledged_writes") or []),
                "status": child.state,
                "created_at": child.created_at,
            }
        )
    return {"run": str(row.id), "derived": True, "forks": forks}


def fork_children(run_id: str) -> list[RunInfo]:
    """The runs forked from ``run_id``, oldest first, as the run page lists them."""
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    rows = Run.objects.select_related("document").filter(origin_id=key)
    return [info(row) for row in rows.order_by("created_at", "id")]
