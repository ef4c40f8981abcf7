"""``db_worker`` drives queued runs, one worker per run, and queues again the runs whose worker
died (the lease sweep)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from editor.engine import prepare_resume
from editor.models import Run
from editor.services.installation import tools
from editor.store import OrmRunStore
from editor.tasks import drive_run, enqueue_run, sweep_expired_leases
from tests.integration.runs.starting import ECHO_CHAIN, GATED, kinds, one_tool, start, state

pytestmark = pytest.mark.django_db(transaction=True)

COMPLETED = [
    "GraphRunStarted",
    "NodeEntered",
    "ToolCallRequested",
    "ToolCallCompleted",
    "NodeExited",
    "NodeEntered",
    "ToolCallRequested",
    "ToolCallCompleted",
    "NodeExited",
    "RunCompleted",
]


def test_a_worker_drives_a_queued_run_to_completion(work_the_queue: Callable[[], str]) -> None:
    run_id = start(ECHO_CHAIN, {"topic": "tea"})
    with transaction.atomic():
        enqueue_run(run_id)

    work_the_queue()

    run = Run.objects.get(pk=run_id)
    assert run.state == "completed"
    assert run.status == {"state": "completed", "output": {"topic": "tea"}}
    assert kinds(run_id) == COMPLETED
    assert run.lease_owner == ""  # the worker let go of it


def test_a_run_is_queued_only_when_the_transaction_that_started_it_commits(
    work_the_queue: Callable[[], str],
) -> None:
    run_id = start(ECHO_CHAIN)
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue_run(run_id)
        raise RuntimeError("the start failed after all")

    work_the_queue()

    assert state(run_id) == "queued"


def test_a_worker_leaves_alone_a_run_another_worker_drives(
    work_the_queue: Callable[[], str],
) -> None:
    run_id = start(ECHO_CHAIN)
    other = OrmRunStore("another-worker", lease_seconds=300)
    assert other.claim(run_id)
    drive_run.enqueue(run_id)

    work_the_queue()

    assert kinds(run_id) == ["GraphRunStarted"]
    assert Run.objects.get(pk=run_id).lease_owner == "another-worker"

    other.release(run_id)
    assert drive_run.call(run_id) == "completed"


def test_a_task_for_a_finished_run_changes_nothing() -> None:
    run_id = start(ECHO_CHAIN)
    assert drive_run.call(run_id) == "completed"

    assert drive_run.call(run_id) is None
    assert kinds(run_id) == COMPLETED


def test_a_run_whose_worker_died_is_queued_again_and_completed(
    work_the_queue: Callable[[], str],
) -> None:
    run_id = start(ECHO_CHAIN, {"topic": "tea"})
    # A worker claimed it, recorded its first step, and died: no task is left for the run.
    dead = OrmRunStore("dead-worker", lease_seconds=30)
    assert dead.claim(run_id)
    Run.objects.filter(pk=run_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    work_the_queue()

    assert state(run_id) == "completed"
    assert kinds(run_id) == COMPLETED


def test_the_sweep_queues_a_stranded_run_once_until_its_new_lease_runs_out() -> None:
    run_id = start(ECHO_CHAIN)
    Run.objects.filter(pk=run_id).update(
        lease_owner="dead-worker", lease_expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert sweep_expired_leases() == 1
    assert sweep_expired_leases() == 0  # a worker has a lease period to pick it up

    # A worker took that task and died too before it claimed the run.
    DBTaskResult.objects.filter(id=Run.objects.get(pk=run_id).queue_task).update(status="RUNNING")
    Run.objects.filter(pk=run_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert sweep_expired_leases() == 1  # that task was lost too


def test_the_sweep_queues_a_run_that_was_never_claimed_within_a_lease_period() -> None:
    run_id = start(ECHO_CHAIN)  # recorded, but its task was lost before it was queued
    assert sweep_expired_leases() == 0  # just started: its task may still be on its way

    Run.objects.filter(pk=run_id).update(updated_at=timezone.now() - timedelta(minutes=5))
    assert sweep_expired_leases() == 1


def test_the_sweep_leaves_alone_runs_that_are_driven_parked_or_finished() -> None:
    driven, parked, finished = start(ECHO_CHAIN), start(ECHO_CHAIN), start(ECHO_CHAIN)
    long_ago = timezone.now() - timedelta(minutes=5)
    OrmRunStore("live-worker", lease_seconds=300).claim(driven)
    Run.objects.filter(pk=parked).update(state="suspended", updated_at=long_ago)
    Run.objects.filter(pk=finished).update(state="completed", updated_at=long_ago)

    assert sweep_expired_leases() == 0


def test_a_run_resolved_while_its_worker_lets_go_is_queued_again(
    monkeypatch: pytest.MonkeyPatch, work_the_queue: Callable[[], str]
) -> None:
    run_id = start(GATED, {"draft": "hello"})
    release = OrmRunStore.release

    def resolved_just_before_release(store: OrmRunStore, run: str, **how: Any) -> None:
        # The resume lands while this worker still holds the lease: its task finds the run
        # leased and leaves it.
        service = OrmRunStore()
        events, status = prepare_resume(
            service.load_run(run), {"input": {"approved": True}}, "ada", timezone.now()
        )
        service.record(run, events, status)
        assert drive_run.call(run) is None
        release(store, run, **how)

    monkeypatch.setattr(OrmRunStore, "release", resolved_just_before_release)
    assert drive_run.call(run_id) == "suspended"
    monkeypatch.undo()

    work_the_queue()

    assert state(run_id) == "completed"


def test_of_workers_claiming_one_run_at_the_same_moment_exactly_one_wins() -> None:
    run_id = start(ECHO_CHAIN)
    workers = 4
    barrier = threading.Barrier(workers)

    def claim(number: int) -> bool:
        store = OrmRunStore(f"worker-{number}")
        try:
            barrier.wait(timeout=30)
            return store.claim(run_id)
        finally:
            connection.close()

    with ThreadPoolExecutor(workers) as pool:
        won = list(pool.map(claim, range(workers)))

    assert won.count(True) == 1
    assert Run.objects.get(pk=run_id).lease_owner == f"worker-{won.index(True)}"


def test_a_worker_keeps_its_lease_alive_while_a_slow_call_runs(settings: Any) -> None:
    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.slow_tools"]
    settings.GATEHOUSE_RUN_LEASE_SECONDS = 1
    tools.cache_clear()
    try:
        run_id = start(one_tool("until_renewed"))

        assert drive_run.call(run_id) == "completed"
    finally:
        tools.cache_clear()
    assert Run.objects.get(pk=run_id).status["output"] == {"renewed": True}
