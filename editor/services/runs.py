"""Runs: starting them, reading them, and resolving or abandoning them (spec 04, spec 05 *Runs*).

The one place that combines the ORM, the engine and the registries for runs. Nodes never run
here: a started or resumed run is handed to the task queue (``editor.tasks.enqueue_run``), and a
worker drives it. What this module writes, it writes through the store's unleased append
(``OrmRunStore.record``), which is guarded by the run's event count: of two writers of the same
position in a log exactly one wins, so a suspension is resolved exactly once and an abandon
never interleaves with a worker's step.

Who may do what is spec 06's table: anyone signed in reads; *operators* start and abandon runs,
raise budgets and reconcile writes; *approvers* resolve gates.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from editor.engine import (
    graph_projection,
    prepare_abandon,
    prepare_resume,
    resolve_names,
    run_status,
    start_event,
)
from editor.engine.errors import InvalidResumeInput, NotParked, RunLost, TransitionRefused
from editor.engine.ports import Envelope, RunRecord
from editor.engine.states import RunState
from editor.engine.status import scope_key
from editor.graph import MalformedDocument, parse_document
from editor.models import Document, Run, RunEvent
from editor.services.access import can_approve, can_operate
from editor.services.errors import (
    AlreadyFinished,
    InputTooLarge,
    InvalidCursor,
    InvalidRequest,
    InvalidResume,
    NotAllowed,
    NotRunnable,
    NotSuspended,
    RunBusy,
    UnknownDocument,
    UnknownRun,
)
from editor.services.graphs import is_graph_hash, load_graph, validate_graph_document
from editor.services.installation import installation
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.services.storable import check_storable, nul_path
from editor.store import OrmRunStore, envelope_of
from editor.tasks import enqueue_run

__all__ = [
    "EVENTS_PAGE_LIMIT",
    "MAX_LABELS",
    "AbandonOutcome",
    "EventPage",
    "ResumeOutcome",
    "RunInfo",
    "abandon",
    "check_labels",
    "get_run",
    "list_runs",
    "list_tools",
    "resume",
    "run_events",
    "run_graph",
    "start_run",
    "validate_runnable",
]

#: Spec 05: at most 16 labels, keys up to 64 bytes, values up to 256 bytes (UTF-8).
MAX_LABELS = 16
MAX_LABEL_KEY_BYTES = 64
MAX_LABEL_VALUE_BYTES = 256

#: The events page is the exception to the list limit (spec 05).
EVENTS_PAGE_LIMIT = 1000

#: How often an abandon retries when a worker appended between its read and its write. A
#: worker appends once per engine step, so losing this many times in a row means the run is
#: appending far faster than any real step; the caller is told to try again.
_ABANDON_ATTEMPTS = 10

#: Who resolves what: a gate needs an approver, a budget or a reconciliation an operator.
_RESOLVER = {"gate": can_approve, "budget": can_operate, "reconciliation": can_operate}


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

    @property
    def state(self) -> str:
        return str(self.status.get("state", ""))


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    """``POST /v1/runs/{id}/resume``'s answer: the resolution is recorded, a worker drives on."""

    run: str
    status: str = RunState.RUNNING.value
    outcome: str = "driving"


@dataclass(frozen=True, slots=True)
class AbandonOutcome:
    run: str
    status: dict[str, Any]


@dataclass(frozen=True, slots=True)
class EventPage:
    """Envelopes in ``seq`` order; ``next`` is the ``after`` of the next page, or ``None``."""

    events: list[dict[str, Any]]
    next: int | None


# --- Reading ----------------------------------------------------------------------------------


def _store() -> OrmRunStore:
    return OrmRunStore()


def _run(run_id: str) -> Run:
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    try:
        return Run.objects.select_related("document").get(pk=key)
    except Run.DoesNotExist:
        raise UnknownRun(str(run_id)) from None


def _public_status(status: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in status.items() if key != "pending"}


def _info(run: Run) -> RunInfo:
    status = dict(run.status or {"state": run.state})
    return RunInfo(
        run=str(run.id),
        graph_hash=run.graph_id,
        labels=dict(run.labels or {}),
        status=_public_status(status),
        event_count=run.event_count,
        created_at=run.created_at,
        updated_at=run.updated_at,
        document=run.document.slug if run.document_id else None,
        pending=tuple(status.get("pending") or ()),
    )


def _envelopes(run: Run) -> tuple[Envelope, ...]:
    return tuple(envelope_of(row) for row in RunEvent.objects.filter(run=run).order_by("seq"))


def _record(run: Run) -> RunRecord:
    return _store().load_run(str(run.id))


def get_run(run_id: str) -> RunInfo:
    """One run; raises :class:`UnknownRun` (also for text that is not a run id)."""
    return _info(_run(run_id))


def list_runs(
    *,
    status: str | None = None,
    graph: str | None = None,
    cursor: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Page[RunInfo]:
    """Runs, newest first; ``status`` keeps one state, ``graph`` one graph's runs."""
    runs = Run.objects.select_related("document").order_by("-created_at", "-id")
    if status:
        if status not in {state.value for state in RunState}:
            states = ", ".join(state.value for state in RunState)
            raise InvalidRequest(f"`status` must be one of: {states}", "status")
        runs = runs.filter(state=status)
    if graph:
        # Text that is not a graph's hash names none (and a NUL would fail on PostgreSQL).
        runs = runs.filter(graph_id=graph) if is_graph_hash(graph) else runs.none()
    if cursor is not None:
        created, key = decode_cursor(cursor, (str, str))
        try:
            created_at = datetime.fromisoformat(created)
            pk = uuid.UUID(key)
        except ValueError:
            raise InvalidCursor() from None
        runs = runs.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk))
    rows = list(runs[: limit + 1])
    page = page_of(rows, limit, lambda row: [row.created_at.isoformat(), str(row.id)])
    return Page([_info(row) for row in page.items], page.next)


def run_events(run_id: str, after: int | None = None, limit: int = EVENTS_PAGE_LIMIT) -> EventPage:
    """A run's envelopes after ``seq`` ``after`` (exclusive), at most ``limit`` of them."""
    run = _run(run_id)
    limit = max(1, min(limit, EVENTS_PAGE_LIMIT))
    rows = RunEvent.objects.filter(run=run).order_by("seq")
    if after is not None:
        rows = rows.filter(seq__gt=after)
    fetched = list(rows[: limit + 1])
    shown = fetched[:limit]
    events = [envelope_of(row).as_json() for row in shown]
    more = len(fetched) > limit
    return EventPage(events, shown[-1].seq if more else None)


def run_graph(run_id: str) -> dict[str, Any]:
    """The per-node projection of a run onto its graph (``GET /v1/runs/{id}/graph``)."""
    run = _run(run_id)
    return graph_projection(run.graph_id, _envelopes(run))


def list_tools() -> list[dict[str, Any]]:
    """Every tool this installation registers, as ``GET /v1/tools`` lists them."""
    return [spec.describe() for spec in installation().tools.all()]


# --- Starting ---------------------------------------------------------------------------------


def check_labels(labels: Any) -> dict[str, str]:
    """Spec 05's labels: an object of strings, at most 16, keys ≤ 64 and values ≤ 256 bytes."""
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise InvalidRequest("`labels` must be an object of strings", "labels")
    if len(labels) > MAX_LABELS:
        raise InvalidRequest(
            f"a run takes at most {MAX_LABELS} labels; {len(labels)} were given", "labels"
        )
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidRequest("`labels` must be an object of strings", "labels")
        if len(key.encode("utf-8", "surrogatepass")) > MAX_LABEL_KEY_BYTES:
            raise InvalidRequest(
                f"the label key `{key[:80]}` is longer than {MAX_LABEL_KEY_BYTES} bytes", "labels"
            )
        if not key:
            raise InvalidRequest("a label key cannot be empty", "labels")
        if len(value.encode("utf-8", "surrogatepass")) > MAX_LABEL_VALUE_BYTES:
            raise InvalidRequest(
                f"the value of the label `{key}` is longer than {MAX_LABEL_VALUE_BYTES} bytes",
                "labels",
            )
    where = nul_path(labels)
    if where is not None:
        raise InvalidRequest("labels cannot contain NUL (U+0000) characters", "labels")
    return dict(labels)


def start_run(
    user: Any,
    graph_hash: str,
    input: Any = None,  # the spec's name for it
    labels: Any = None,
    *,
    document_slug: str | None = None,
) -> RunInfo:
    """Start a run of a stored graph: resolve its names here, store it ``queued`` with its
    ``GraphRunStarted``, and hand it to a worker once that commits. Nothing is created when
    anything fails. Answers the run as it was committed (``queued``)."""
    if not can_operate(user):
        raise NotAllowed()
    checked_labels = check_labels(labels)
    where = nul_path(input)
    if where is not None:
        raise InvalidRequest(
            f"the input cannot contain NUL (U+0000) characters (at `{where or '$'}`)", "input"
        )
    graph = load_graph(graph_hash)  # UnknownGraph
    _check_start_size(graph_hash, input, checked_labels)
    problems = resolve_names(graph, installation())
    if problems:
        raise NotRunnable(list(problems))
    document = None
    if document_slug is not None:
        try:
            document = Document.objects.get(slug=document_slug)
        except Document.DoesNotExist:
            raise UnknownDocument(document_slug) from None
    with transaction.atomic():
        run = Run.objects.create(
            graph_id=graph_hash,
            document=document,
            input=input,
            labels=checked_labels,
            state=RunState.QUEUED.value,
            status={"state": RunState.QUEUED.value},
            created_by=user if getattr(user, "pk", None) else None,
        )
        run_id = str(run.id)
        first = start_event(run_id, graph_hash, input, checked_labels or None, timezone.now())
        _store().record(run_id, [first], run_status([first]))
        enqueue_run(run_id)
        started = _info(Run.objects.select_related("document").get(pk=run.pk))
    return started


def _check_start_size(graph_hash: str, input: Any, labels: dict[str, str]) -> None:
    """The input's own cap, checked now rather than when a worker writes past it: the
    ``GraphRunStarted`` event must fit ``GATEHOUSE_EVENT_MAX_BYTES`` like every event."""
    limit = settings.GATEHOUSE_EVENT_MAX_BYTES
    payload = start_event("", graph_hash, input, labels or None, timezone.now()).payload
    size = len(orjson.dumps(payload))
    if size > limit:
        raise InputTooLarge(size, limit)


def validate_runnable(data: bytes | str) -> dict[str, Any]:
    """``POST /v1/graphs/validate?runnable=true``: the validate body, and for a valid graph
    also ``not_runnable``: every name that does not resolve here (empty when it can run)."""
    body = validate_graph_document(data)
    if not body.get("valid"):
        return body
    try:
        graph = parse_document(data)
    except MalformedDocument:  # pragma: no cover - it just validated
        return body
    return {**body, "not_runnable": list(resolve_names(graph, installation()))}


# --- Resolving and abandoning -----------------------------------------------------------------


def _actor(user: Any) -> str:
    return str(user.get_username())


def _pending_item(status: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
    """The pending item a resume resolves: the one ``body`` names (``node``, ``scope``), or
    the oldest (as the engine picks it)."""
    pending = status.get("pending") or []
    if body.get("node") is None:
        return pending[0] if pending else None
    scope = scope_key(body.get("scope"))
    for item in pending:
        if item.get("node") == body["node"] and scope_key(item.get("scope")) == scope:
            return item
    return None


def _check_resolver(user: Any, item: dict[str, Any] | None) -> None:
    if item is None:
        # Nothing to resolve: the engine says so (409), unless the caller may resolve nothing.
        if not (can_approve(user) or can_operate(user)):
            raise NotAllowed()
        return
    allowed = _RESOLVER.get(str(item.get("kind")), can_operate)
    if not allowed(user):
        raise NotAllowed()


def resume(user: Any, run_id: str, body: dict[str, Any]) -> ResumeOutcome:
    """Resolve a parked run (``body``: ``{"input", "comment"?}``) and hand it back to a worker.

    The input is checked before anything is recorded. Exactly once: the resolution is appended
    at the log's next position, so when two people resolve the same suspension together the
    database lets one in and the other learns who resolved it and when (:class:`NotSuspended`).
    """
    check_storable(body)
    run = _run(run_id)
    record = _record(run)
    _check_resolver(user, _pending_item(run_status(record.events), body))
    try:
        events, status = prepare_resume(record, body, _actor(user), timezone.now())
    except NotParked as error:
        raise NotSuspended(error.state, error.resolved_by, error.resolved_at) from None
    except InvalidResumeInput as error:
        raise InvalidResume(error.violations) from None
    try:
        with transaction.atomic():
            _store().record(record.run_id, events, status)
            enqueue_run(record.run_id)
    except (RunLost, TransitionRefused):
        # Someone appended first: most likely another resolution of the same suspension.
        raise _lost_resolution(run, body, user) from None
    return ResumeOutcome(record.run_id)


def _lost_resolution(run: Run, body: dict[str, Any], user: Any) -> NotSuspended:
    """Why a resume lost the race: the winner's name and time, read back from the log."""
    record = _record(run)
    try:
        prepare_resume(record, body, _actor(user), timezone.now())
    except NotParked as error:
        return NotSuspended(error.state, error.resolved_by, error.resolved_at)
    except InvalidResumeInput:
        pass
    status = run_status(record.events)
    return NotSuspended(str(status.get("state", run.state)))


def abandon(user: Any, run_id: str, reason: str | None = None) -> AbandonOutcome:
    """Abandon a run that has not finished; a worker driving it stops before its next append.

    When a worker appends between this read and this write, the abandon is prepared again on
    the longer log (a bounded number of times)."""
    if not can_operate(user):
        raise NotAllowed()
    check_storable({"reason": reason})
    run = _run(run_id)
    for _attempt in range(_ABANDON_ATTEMPTS):
        record = _record(run)
        try:
            events, status = prepare_abandon(record, reason or None, _actor(user), timezone.now())
        except TransitionRefused as error:
            raise AlreadyFinished(error.current) from None
        try:
            _store().record(record.run_id, events, status)
        except RunLost:
            continue
        except TransitionRefused as error:  # the run finished meanwhile
            raise AlreadyFinished(error.current) from None
        return AbandonOutcome(record.run_id, _public_status(status))
    raise RunBusy()
