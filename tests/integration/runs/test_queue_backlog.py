"""A run waiting in a long queue gets one task, however many lease periods it waits: the lease
sweep asks the queue before handing out another, and queues a run again only when its task was
lost (taken by a worker that died, or gone) — at most one new task per run per lease period."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from editor.models import Run
from editor.tasks import enqueue_run, sweep_expired_leases
from tests.integration.runs.starting import ECHO_CHAIN, kinds, start, state

pytestmark = pytest.mark.django_db(transaction=True)


def queued(run_id: str) -> str:
    with transaction.atomic():
        enqueue_run(run_id)
    return run_id


def tasks_of(run_id: str) -> list[DBTaskResult]:
    return [
        task
        for task in DBTaskResult.objects.filter(task_path__endswith="drive_run")
        if task.args_kwargs["args"] == [run_id]
    ]


def a_lease_period_passes(*run_ids: str) -> None:
    """Every lease these runs hold, and their last change, one lease period and more ago."""
    past = timezone.now() - timedelta(seconds=settings.GATEHOUSE_RUN_LEASE_SECONDS + 1)
    runs = Run.objects.filter(id__in=run_ids)
    runs.filter(lease_expires_at__isnull=False).update(lease_expires_at=past)
    runs.update(updated_at=past)


def test_a_run_waiting_behind_a_backlog_keeps_its_one_task_however_long_it_waits(
    work_the_queue: Callable[[], str],
) -> None:
    run_id = queued(start(ECHO_CHAIN))

    for _period in range(5):
        a_lease_period_passes(run_id)
        assert sweep_expired_leases() == 0

    assert len(tasks_of(run_id)) == 1
    work_the_queue()
    assert state(run_id) == "completed"
    assert kinds(run_id).count("RunCompleted") == 1


def test_a_run_whose_task_was_taken_by_a_worker_that_died_gets_one_new_task_a_lease_period() -> (
    None
):
    run_id = queued(start(ECHO_CHAIN))
    # A worker took the task and died before it claimed the run.
    DBTaskResult.objects.filter(status="READY").update(status="RUNNING")
    a_lease_period_passes(run_id)

    assert sweep_expired_leases() == 1
    assert sweep_expired_leases() == 0  # a second sweeper, in the same lease period
    assert len(tasks_of(run_id)) == 2

    a_lease_period_passes(run_id)
    assert sweep_expired_leases() == 0  # the new task still waits: nothing more
    assert len(tasks_of(run_id)) == 2


def test_a_run_whose_task_is_gone_from_the_queue_is_queued_again() -> None:
    run_id = queued(start(ECHO_CHAIN))
    DBTaskResult.objects.all().delete()
    a_lease_period_passes(run_id)

    assert sweep_expired_leases() == 1
    task = tasks_of(run_id)
    assert len(task) == 1
    assert Run.objects.get(id=run_id).queue_task == str(task[0].id)


def test_of_many_runs_in_a_backlog_only_those_whose_tasks_were_lost_are_queued_again() -> None:
    waiting = [queued(start(ECHO_CHAIN)) for _ in range(3)]
    lost = [queued(start(ECHO_CHAIN)) for _ in range(2)]
    for run_id in lost:
        DBTaskResult.objects.filter(id=Run.objects.get(id=run_id).queue_task).delete()
    a_lease_period_passes(*waiting, *lost)

    assert sweep_expired_leases() == 2
    assert [len(tasks_of(run_id)) for run_id in waiting + lost] == [1, 1, 1, 1, 1]
