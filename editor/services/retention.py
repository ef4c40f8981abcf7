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
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from editor.engine.states import TERMINAL
from editor.models import Run, RunEvent

__all__ = ["Batch", "PruneReport", "finished_cutoff", "prune_finished_runs"]

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


def _past(cutoff: datetime) -> QuerySet[Run]:
    # A run finished when its last event was recorded (``updated_at``); it was started before
    # that, so ``created_at`` narrows the search to the index the runs list reads by state.
    return Run.objects.filter(state__in=FINISHED, created_at__lt=cutoff, updated_at__lt=cutoff)


def _delete_runs(ids: list[uuid.UUID], cutoff: datetime) -> Batch:
    with transaction.atomic():
        events, _ = RunEvent.objects.filter(run_id__in=ids).delete()
        runs = _past(cutoff).filter(id__in=ids)
        deleted, _ = runs.delete()
    return Batch(deleted, events)


def _trim(run_id: uuid.UUID, cutoff: datetime, batch_events: int) -> Batch:
    """A run with more events than a batch takes: its last ``batch_events`` events go, or, once
    what is left fits in a batch, the run with them."""
    last = RunEvent.objects.filter(run_id=run_id).aggregate(last=Max("seq"))["last"]
    if last is None or last < batch_events:
        return _delete_runs([run_id], cutoff)
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
) -> PruneReport:
    """Remove every run that finished before ``cutoff``, with its events, in batches."""
    report = PruneReport()
    if dry_run:
        past = _past(cutoff)
        report.runs = past.count()
        report.events = RunEvent.objects.filter(run__in=past.values("id")).count()
        return report
    while True:
        # No order: the first rows the index gives; each batch removes what it read.
        rows = list(_past(cutoff).values_list("id", "event_count")[:batch_runs])
        if not rows:
            return report
        if rows[0][1] > batch_events:
            batch = _trim(rows[0][0], cutoff, batch_events)
        else:
            chosen, events = [], 0
            for run_id, count in rows:
                if events + count > batch_events:
                    break
                chosen.append(run_id)
                events += count
            batch = _delete_runs(chosen, cutoff)
        report.runs += batch.runs
        report.events += batch.events
        report.batches += 1
        if on_batch is not None:
            on_batch(batch)
        if pause:
            time.sleep(pause)
