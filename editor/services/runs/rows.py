"""A run as the services show it (:class:`RunInfo`), and the row helpers the run services share
(:mod:`editor.services.runs` reads and starts runs, :mod:`editor.services.runs.resolutions` resolves
and abandons them)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from editor.engine.ports import Envelope, RunRecord
from editor.engine.states import TERMINAL
from editor.engine.status import with_overdue
from editor.engine.summary import usage_of
from editor.models import Run, RunEvent
from editor.services.errors import UnknownRun
from editor.store import OrmRunStore, envelope_of

__all__ = [
    "TERMINAL_STATES",
    "RunInfo",
    "envelopes",
    "info",
    "public_status",
    "record",
    "run_row",
    "store",
]

#: The states of a run that has ended.
TERMINAL_STATES = frozenset(state.value for state in TERMINAL)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A run as ``GET /v1/runs/{id}`` answers it (plus its document's slug, for pages)."""

    run: str
    graph_hash: str
    labels: dict[str, str]
    #: Spec 05's status object: ``{"state", …state fields}``.
    status: dict[str, Any]
    event_count: int
    created_at: datetime
    updated_at: datetime
    document: str | None = None
    #: For a parked run, what it waits for, oldest first (``{"kind": "gate" | "budget" |
    #: "reconciliation", "node", "scope"?, "seq", "at", …}``). Not part of the status object.
    pending: tuple[dict[str, Any], ...] = ()
    #: When the log's first and last events were recorded (``None`` before any).
    first_recorded_at: str | None = None
    last_recorded_at: str | None = None
    #: ``{"input_tokens", "output_tokens"}`` of every model call so far.
    usage: dict[str, int] | None = None
    #: Model calls requested so far.
    step_count: int = 0
    #: ``attached`` while a worker holds the run's lease, ``none`` when none does, ``None``
    #: once the run has ended.
    driver: str | None = None
    #: The call in flight or cut off (``editor.engine.summary.pending_call``); filled in by
    #: :func:`run_detail` only, since it reads the log.
    pending_call: dict[str, Any] | None = None
    #: For a fork: ``{"run_id", "through_seq", "from_node", "graph_hash",
    #: "acknowledged_writes"}``, as its first event records it.
    forked_from: dict[str, Any] | None = None
    #: For a test run of a draft: ``{"document", "revision"}``; ``None`` for every other run.
    test: dict[str, Any] | None = None
    #: For an agent run (``POST /v1/runs``): the agent's hash; ``None`` for a graph run.
    agent_def_hash: str | None = None

    @property
    def state(self) -> str:
        return str(self.status.get("state", ""))


def store() -> OrmRunStore:
    return OrmRunStore()


def run_row(run_id: str) -> Run:
    """The run's row (with its document); raises :class:`UnknownRun`, also for text that is
    not a run id."""
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    try:
        return Run.objects.select_related("document").get(pk=key)
    except Run.DoesNotExist:
        raise UnknownRun(str(run_id)) from None


def public_status(status: dict[str, Any]) -> dict[str, Any]:
    """The status object of spec 05: the stored status without the pending items, and for a
    sleeping run past its ``wake_at``, ``overdue`` as of now (spec 08; never stored)."""
    public = {key: value for key, value in status.items() if key != "pending"}
    return with_overdue(public, timezone.now())


def _driver(run: Run) -> str | None:
    if run.state in TERMINAL_STATES:
        return None
    held = run.lease_owner and run.lease_expires_at and run.lease_expires_at > timezone.now()
    return "attached" if held else "none"


def info(run: Run) -> RunInfo:
    status = dict(run.status or {"state": run.state})
    return RunInfo(
        run=str(run.id),
        graph_hash=run.graph_id,
        labels=dict(run.labels or {}),
        status=public_status(status),
        event_count=run.event_count,
        created_at=run.created_at,
        updated_at=run.updated_at,
        document=run.document.slug if run.document is not None else None,
        pending=tuple(status.get("pending") or ()),
        first_recorded_at=run.first_recorded_at or None,
        last_recorded_at=run.last_recorded_at or None,
        usage=usage_of(run.input_tokens, run.output_tokens),
        step_count=run.step_count,
        driver=_driver(run),
        forked_from=run.forked_from or None,
        test=_test_of(run),
        agent_def_hash=run.agent or None,
    )


def _test_of(run: Run) -> dict[str, Any] | None:
    if run.test_revision is None:
        return None
    slug = run.document.slug if run.document is not None else None
    test: dict[str, Any] = {"document": slug, "revision": run.test_revision}
    if run.test_node:
        test["node"] = run.test_node
    return test


def envelopes(run: Run) -> tuple[Envelope, ...]:
    return tuple(envelope_of(row) for row in RunEvent.objects.filter(run=run).order_by("seq"))


def record(run: Run) -> RunRecord:
    return store().record_of(run)
