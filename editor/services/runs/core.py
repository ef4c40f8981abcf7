"""Runs: starting them and reading them (spec 04, spec 05 *Runs*); resolving and abandoning
them is :mod:`editor.services.runs.resolutions`, re-exported here.

The one place that combines the ORM, the engine and the registries for runs. Nodes never run
here: a started run is handed to the task queue (``editor.drives.enqueue_run``), and a worker
drives it. Its first event is written through the store's unleased append
(``OrmRunStore.record``), as every person's change of a run is.

Who may do what is spec 06's table: anyone signed in reads; *operators* start and abandon runs,
raise budgets and reconcile writes; *approvers* resolve gates.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from editor.drives import enqueue_run
from editor.engine import StatusFold, graph_projection, resolve_names, run_status, start_event
from editor.engine.ports import Envelope
from editor.engine.states import RunState
from editor.engine.summary import call_counts, pending_call, usage_of
from editor.graph import MalformedDocument, parse_document
from editor.models import Document, Run, RunEvent
from editor.services import quotas
from editor.services.access import ActingUser, author_of, can_operate
from editor.services.documents import run_policies
from editor.services.documents.graphs import load_graph, validate_graph_document
from editor.services.errors import (
    InputTooLarge,
    InvalidCursor,
    InvalidRequest,
    NotAllowed,
    NotRunnable,
    UnknownDocument,
)
from editor.services.installation import installation
from editor.services.installation import tools as installed_tools
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.services.runs.filters import NO_RUN_FILTER, RunFilter
from editor.services.runs.log_reads import events_page, log_envelopes
from editor.services.runs.resolutions import (
    AbandonOutcome,
    ResolveOutcome,
    ResumeOutcome,
    abandon,
    resolve,
    resume,
    wake,
)
from editor.services.runs.rows import TERMINAL_STATES, RunInfo, info, public_status, run_row, store
from editor.services.storable import nul_path
from editor.store import envelope_of

__all__ = [
    "CALL_KINDS",
    "EVENTS_PAGE_LIMIT",
    "MAX_LABELS",
    "AbandonOutcome",
    "ResolveOutcome",
    "ResumeOutcome",
    "RunInfo",
    "TestOf",
    "abandon",
    "check_labels",
    "get_run",
    "list_runs",
    "list_tools",
    "replay",
    "resolve",
    "resume",
    "run_detail",
    "run_events",
    "run_graph",
    "run_list_query",
    "run_rows",
    "start_run",
    "validate_runnable",
    "wake",
]

#: Spec 05: at most 16 labels, keys up to 64 bytes, values up to 256 bytes (UTF-8).
MAX_LABELS = 16
MAX_LABEL_KEY_BYTES = 64
MAX_LABEL_VALUE_BYTES = 256

#: The events page is the exception to the list limit (spec 05).
EVENTS_PAGE_LIMIT = 1000

#: The events :func:`run_detail` reads for the call in flight.
CALL_KINDS = (
    "ModelCallRequested",
    "ModelCallCompleted",
    "ToolCallRequested",
    "ToolCallCompleted",
    "Reconciled",
)


# --- Reading ----------------------------------------------------------------------------------


def get_run(run_id: str) -> RunInfo:
    """One run; raises :class:`UnknownRun` (also for text that is not a run id)."""
    return info(run_row(run_id))


def run_detail(run_id: str) -> RunInfo:
    """One run as ``GET /v1/runs/{id}`` answers it: with the call it has in flight, read from
    its log (a run that has ended has none)."""
    run = run_row(run_id)
    shown = info(run)
    if run.state in TERMINAL_STATES:
        return shown
    calls = RunEvent.objects.filter(run=run, kind__in=CALL_KINDS).order_by("seq")
    return replace(shown, pending_call=pending_call(envelope_of(row) for row in calls))


def replay(run_id: str) -> dict[str, Any]:
    """``GET /v1/runs/{id}/replay``: the run's state folded from its log alone, executing
    nothing: ``{"status", "next_seq", "usage", "pending"?}``."""
    run = run_row(run_id)
    fold = StatusFold()
    counted = [0, 0, 0, 0]  # events, model calls, input tokens, output tokens

    def folding(envelopes: Iterator[Envelope]) -> Iterator[Envelope]:
        for envelope in envelopes:
            fold.feed(envelope)
            for index, value in enumerate((1, *call_counts((envelope,)))):
                counted[index] += value
            yield envelope

    # One pass over the log, a slice at a time: the pending call is found as it goes by.
    stream = folding(log_envelopes(str(run.id)))
    call = pending_call(stream)
    for _rest in stream:
        pass
    count, _steps, tokens_in, tokens_out = counted
    folded: dict[str, Any] = {
        "status": public_status(fold.status()),
        "next_seq": count,
        "usage": usage_of(tokens_in, tokens_out),
    }
    if call is not None:
        folded["pending"] = call
    return folded


def run_list_query(filters: RunFilter = NO_RUN_FILTER, cursor: str | None = None) -> QuerySet[Run]:
    """The runs ``filters`` keeps after ``cursor``, newest first, with each run's document and
    starter (the query of :func:`run_rows`, whose plans a test reads on PostgreSQL). Raises
    :class:`InvalidCursor` for a cursor this server could not have handed out."""
    runs = filters.apply(
        Run.objects.select_related("document", "created_by").order_by("-created_at", "-id")
    )
    if cursor is not None:
        created, key = decode_cursor(cursor, (str, str))
        try:
            created_at = datetime.fromisoformat(created)
            pk = uuid.UUID(key)
        except ValueError:
            raise InvalidCursor() from None
        # The first condition alone is a range of the index, where the scan starts; the
        # second only drops the runs of the cursor's own moment that were shown already.
        runs = runs.filter(created_at__lte=created_at).filter(
            Q(created_at__lt=created_at) | Q(id__lt=pk)
        )
    return runs


def run_rows(
    filters: RunFilter = NO_RUN_FILTER, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[Run]:
    """A page of run rows, newest first, kept by ``filters``
    (:mod:`editor.services.runs.filters`), with each run's document and starter: one query,
    whatever the filters and however many runs there are."""
    rows = list(run_list_query(filters, cursor)[: limit + 1])
    return page_of(rows, limit, lambda row: [row.created_at.isoformat(), str(row.id)])


def list_runs(
    filters: RunFilter = NO_RUN_FILTER, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[RunInfo]:
    """Runs, newest first, kept by ``filters``, as ``GET /v1/runs`` lists them."""
    page = run_rows(filters, cursor=cursor, limit=limit)
    return Page([info(row) for row in page.items], page.next)


def run_events(run_id: str, after: int | None = None, limit: int = EVENTS_PAGE_LIMIT) -> bytes:
    """A run's envelopes after ``seq`` ``after`` (exclusive), at most ``limit`` of them and at
    most ``GATEHOUSE_EVENTS_PAGE_BYTES`` of payload (at least one), as the JSON body of
    ``GET /v1/runs/{id}/events``: ``{"events": [...], "next": <after> | null}``
    (:func:`editor.services.runs.log_reads.events_page`)."""
    run = run_row(run_id)
    return events_page(str(run.id), after, max(1, min(limit, EVENTS_PAGE_LIMIT)))


def run_graph(run_id: str) -> dict[str, Any]:
    """The per-node projection of a run onto its graph (``GET /v1/runs/{id}/graph``)."""
    run = run_row(run_id)
    projection = graph_projection(run.graph_id, log_envelopes(str(run.id)))
    if run.forked_from:
        projection["forked_from"] = run.forked_from
    return projection


def list_tools() -> list[dict[str, Any]]:
    """Every tool this installation registers, as ``GET /v1/tools`` lists them."""
    return [spec.describe() for spec in installed_tools().all()]


# --- Starting ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TestOf:
    """What makes a run a test run: the draft revision it runs, and the pinned outputs it
    uses instead of running those nodes."""

    __test__ = False  # not a pytest class

    revision: int
    pins: dict[str, Any] = field(default_factory=dict)
    #: The node it runs alone (**Execute this node**); ``None`` for the whole draft.
    node: str | None = None


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
    user: ActingUser,
    graph_hash: str,
    input: Any = None,  # the spec's name for it
    labels: Any = None,
    *,
    document_slug: str | None = None,
    test: TestOf | None = None,
    agent: str = "",
) -> RunInfo:
    """Start a run of a stored graph: resolve its names here, store it ``queued`` with its
    ``GraphRunStarted``, and hand it to a worker once that commits. Nothing is created when
    anything fails. Answers the run as it was committed (``queued``).

    Every run starts here, test runs of a draft too (``test``: the draft revision and the
    pins it uses, from :mod:`editor.services.runs.test_runs`, which checked the author), and agent
    runs (``agent``: the hash their one-node graph runs, from
    :mod:`editor.services.runs.agent_runs`); what limits the runs a person starts belongs here,
    once, for all of them."""
    if test is None and not can_operate(user):
        raise NotAllowed()
    checked_labels = check_labels(labels)
    where = nul_path(input)
    if where is not None:
        raise InvalidRequest(
            f"the input cannot contain NUL (U+0000) characters (at `{where or '$'}`)", "input"
        )
    graph = load_graph(graph_hash)  # UnknownGraph
    problems = resolve_names(graph, installation())
    if problems:
        raise NotRunnable(list(problems))
    document = None
    if document_slug is not None:
        try:
            document = Document.objects.get(slug=document_slug)
        except Document.DoesNotExist:
            raise UnknownDocument(document_slug) from None
    # The approval policy in force now, recorded in the run's first event: a test run's gates
    # are its author's alone, as before policies (docs/inbox.md, *Approval policies*).
    policy = run_policies.bound_policy(document, graph_hash, graph) if test is None else None
    _check_start_size(graph_hash, input, checked_labels, policy)
    with transaction.atomic():
        # GATEHOUSE_RATE_RUNS_PER_HOUR: refused, the count rolls back with the rest.
        quotas.count_run_start(user)
        run = Run.objects.create(
            graph_id=graph_hash,
            document=document,
            input=input,
            labels=checked_labels,
            state=RunState.QUEUED.value,
            status={"state": RunState.QUEUED.value},
            created_by=author_of(user),
            test_revision=test.revision if test is not None else None,
            test_pins=dict(test.pins) if test is not None else {},
            test_node=(test.node or "") if test is not None else "",
            agent=agent,
            approval_policy=policy,
        )
        run_id = str(run.id)
        first = start_event(
            run_id, graph_hash, input, checked_labels or None, timezone.now(), policy
        )
        store().record(run_id, [first], run_status([first]))
        enqueue_run(run_id)
        started = info(Run.objects.select_related("document").get(pk=run.pk))
    return started


def _check_start_size(
    graph_hash: str, input: Any, labels: dict[str, str], policy: dict[str, Any] | None
) -> None:
    """The input's own cap, checked now rather than when a worker writes past it: the
    ``GraphRunStarted`` event (with the approval policy it records) must fit
    ``GATEHOUSE_EVENT_MAX_BYTES`` like every event."""
    limit = settings.GATEHOUSE_EVENT_MAX_BYTES
    payload = start_event("", graph_hash, input, labels or None, timezone.now(), policy).payload
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
