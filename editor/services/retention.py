"""Data retention: removing the runs that finished longer ago than the installation keeps them
(``GATEHOUSE_FINISHED_RUN_RETENTION_DAYS``; ``manage.py prune``).

A finished run goes as a whole, its row and its event log together: a run is its log (spec 04),
and a row kept without it would show a state nothing backs. Runs that have not finished are
never touched, however old. The work is done in small transactions, each removing at most
``batch_runs`` runs and ``batch_events`` events, with a pause between them, so the web
processes and the workers write between batches: on PostgreSQL only the removed rows are
locked, and SQLite's single writer is held for one batch at a time. A run with more events than
a batch takes loses its log from the end backwards, a batch at a time, so until its last batch
it shows a shorter log, never one with gaps.

Draft revisions (the **History** panel's saved states) older than
``GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS`` go the same way, ``batch_revisions`` rows a
transaction, except those that back what people still see: the draft's current revision, the
edit state it stands on (its ``base``: what Undo walks from) and what Redo would bring back, and
every revision frozen as a version (``Version.revision``). Each batch's ``DELETE`` checks those
conditions again, so a revision that became the draft's state since the batch was chosen stays.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, F, Max, OuterRef, QuerySet
from django.utils import timezone

from editor.engine.states import TERMINAL
from editor.models import Draft, DraftRevision, Run, RunEvent, Version
from editor.services import quotas

__all__ = [
    "Batch",
    "PruneReport",
    "finished_cutoff",
    "prune_draft_revisions",
    "prune_finished_runs",
    "revisions_past",
]

FINISHED = tuple(sorted(state.value for state in TERMINAL))


@dataclass(frozen=True, slots=True)
class Batch:
    """What one transaction removed."""

    runs: int
    events: int


@dataclass(slots=True)
class PruneReport:
    runs: int = 0
    events: int = 0
    batches: int = 0


def finished_cutoff(days: int, now: datetime | None = None) -> datetime:
    """Runs that finished before this moment are past a retention of ``days`` days."""
    return (now or timezone.now()) - timedelta(days=days)


def _past(cutoff: datetime, tests_only: bool = False) -> QuerySet[Run]:
    # A run finished when its last event was recorded (``updated_at``); it was started before
    # that, so ``created_at`` narrows the search to the index the runs list reads by state.
    runs = Run.objects.filter(state__in=FINISHED, created_at__lt=cutoff, updated_at__lt=cutoff)
    # Test runs of drafts have their own retention (GATEHOUSE_TEST_RUN_RETENTION_DAYS).
    return runs.filter(test_revision__isnull=False) if tests_only else runs


def _delete_runs(ids: list[uuid.UUID], cutoff: datetime, tests_only: bool = False) -> Batch:
    with transaction.atomic():
        events, _ = RunEvent.objects.filter(run_id__in=ids).delete()
        runs = _past(cutoff, tests_only).filter(id__in=ids)
        deleted, _ = runs.delete()
    return Batch(deleted, events)


def _trim(run_id: uuid.UUID, cutoff: datetime, batch_events: int, tests_only: bool) -> Batch:
    """A run with more events than a batch takes: its last ``batch_events`` events go, or, once
    what is left fits in a batch, the run with them."""
    last = RunEvent.objects.filter(run_id=run_id).aggregate(last=Max("seq"))["last"]
    if last is None or last < batch_events:
        return _delete_runs([run_id], cutoff, tests_only)
    with transaction.atomic():
        removed, _ = RunEvent.objects.filter(run_id=run_id, seq__gt=last - batch_events).delete()
    return Batch(0, removed)


def prune_finished_runs(
    cutoff: datetime,
    *,
    batch_runs: int = 500,
    batch_events: int = 10_000,
    pause: float = 0.05,
    dry_run: bool = False,
    on_batch: Callable[[Batch], None] | None = None,
    tests_only: bool = False,
) -> PruneReport:
    """Remove every run that finished before ``cutoff``, with its events, in batches
    (``tests_only``: only the test runs of drafts)."""
    report = PruneReport()
    if dry_run:
        past = _past(cutoff, tests_only)
        report.runs = past.count()
        report.events = RunEvent.objects.filter(run__in=past.values("id")).count()
        return report
    while True:
        # No order: the first rows the index gives; each batch removes what it read.
        rows = list(_past(cutoff, tests_only).values_list("id", "event_count")[:batch_runs])
        if not rows:
            return report
        if rows[0][1] > batch_events:
            batch = _trim(rows[0][0], cutoff, batch_events, tests_only)
        else:
            chosen, events = [], 0
            for run_id, count in rows:
                if events + count > batch_events:
                    break
                chosen.append(run_id)
                events += count
            batch = _delete_runs(chosen, cutoff, tests_only)
        report.runs += batch.runs
        report.events += batch.events
        report.batches += 1
        if on_batch is not None:
            on_batch(batch)
        if pause:
            time.sleep(pause)


def revisions_past(cutoff: datetime) -> QuerySet[DraftRevision]:
    """The draft revisions saved before ``cutoff`` but for the draft's current one, the edit
    state it stands on and those frozen as versions (the redo stack: :func:`_redo_targets`)."""
    same_document = {"document_id": OuterRef("document_id")}
    current = Draft.objects.filter(**same_document, revision=OuterRef("number"))
    # The current revision's row names the edit state the draft stands on as its ``base``.
    stood_on = DraftRevision.objects.filter(
        **same_document, base=OuterRef("number"), number=F("document__draft__revision")
    )
    frozen = Version.objects.filter(**same_document, revision=OuterRef("number"))
    return (
        DraftRevision.objects.filter(created_at__lt=cutoff)
        .exclude(Exists(current))
        .exclude(Exists(stood_on))
        .exclude(Exists(frozen))
    )


def _redo_targets(documents: set[int]) -> set[tuple[int, int]]:
    """(document, revision) for what **Redo** brings back from each draft's current state (a
    JSON list, read here rather than in SQL: SQLite has no JSON containment)."""
    current = DraftRevision.objects.filter(
        document_id__in=documents, number=F("document__draft__revision")
    ).values_list("document_id", "redo")
    return {(document, number) for document, redo in current for number in redo}


def prune_draft_revisions(
    cutoff: datetime,
    *,
    batch_revisions: int = 1_000,
    pause: float = 0.05,
    dry_run: bool = False,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Remove the draft revisions past ``cutoff`` that nothing stands on, a batch a
    transaction, in the order they were stored; the number removed (with ``dry_run``: that
    would be)."""
    removed, after = 0, 0
    while True:
        rows = list(
            revisions_past(cutoff)
            .filter(id__gt=after)
            .order_by("id")
            .values_list("id", "document_id", "number")[:batch_revisions]
        )
        if not rows:
            return removed
        after = rows[-1][0]
        kept = _redo_targets({document for _, document, _ in rows})
        ids = [row_id for row_id, document, number in rows if (document, number) not in kept]
        if dry_run or not ids:
            removed += len(ids)
            continue
        with transaction.atomic():
            # The conditions again: what became the draft's state since the rows were read stays.
            pruned = revisions_past(cutoff).filter(id__in=ids)
            released = quotas.bytes_by_saver(pruned)
            deleted, _ = pruned.delete()
            quotas.release_bytes(released)  # their savers' stored bytes, in the same step
        removed += deleted
        if on_batch is not None:
            on_batch(deleted)
        if pause:
            time.sleep(pause)
