"""Asking for a run to be driven: the port between the services, which record runs, and the
worker side (:mod:`editor.tasks`), which drives them.

The services sit below the task layer and never import it: they call :func:`enqueue_run` here,
and at start-up the application (:mod:`editor.apps`) connects the task that drives a run
(``editor.tasks.drive_run``). The queue only dispatches; a run's durability lives in its lease
and its log (spec 04 *Durability*), so the sweep can always queue a run again.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.tasks import Task

from editor.models import Run

__all__ = ["connect", "enqueue_run", "queue_drive"]

_driver: Task | None = None


def connect(task: Task) -> None:
    """Name the task that drives a run (one argument: the run's id)."""
    global _driver
    _driver = task


def enqueue_run(run_id: str) -> None:
    """Hand the run to a worker once the current transaction (which recorded it) commits."""
    transaction.on_commit(lambda: queue_drive(str(run_id)))


def queue_drive(run_id: str, run_after: datetime | None = None) -> None:
    """Queue one drive of the run (not before ``run_after``), and note the task's id on the
    run, where the sweep looks for it."""
    if _driver is None:
        raise ImproperlyConfigured("no task drives runs: editor.apps connects editor.tasks")
    task = _driver if run_after is None else _driver.using(run_after=run_after)
    result = task.enqueue(str(run_id))
    Run.objects.filter(id=run_id).update(queue_task=str(result.id)[:64])
