"""Runs always end (docs/engine.md, *Runs always end*): a drive that raises fails the run with a
reason a person can read; drives cut off too often fail it, naming the cause; a drive past its
wall time is ended by the worker's watchdog. Never a silent re-queue."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

import editor.engine.runner
from editor.models import Run
from editor.store import OrmRunStore
from editor.tasks import drive_run, sweep_expired_leases
from tests.integration.api.callers import make_user
from tests.integration.runs.starting import ECHO_CHAIN, kinds, start, state

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 60.0  # seconds: far beyond what each wait takes, so only a real hang fails

#: check (echo, its input checked against a schema) → after (echo)
CHECKED: dict[str, Any] = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "check", "tool": "echo", "input_schema": {}}},
        {"kind": "tool", "payload": {"id": "after", "tool": "echo"}},
    ],
    "edges": [{"from": "check", "to": "after"}],
}


def long_ago(run_id: str) -> None:
    """As if the run's last change were long past (a sweep then considers it stranded)."""
    Run.objects.filter(pk=run_id).update(updated_at=timezone.now() - timedelta(minutes=10))


def cut_off(run_id: str) -> None:
    """A worker claims the run and dies: its lease is left to run out."""
    assert OrmRunStore("dead-worker").claim(run_id)
    Run.objects.filter(pk=run_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


# --- a drive that raises ------------------------------------------------------------------------


def test_a_drive_that_raises_fails_the_run_with_a_readable_reason(
    monkeypatch: pytest.MonkeyPatch,
    work_the_queue: Callable[[], str],
    caplog: pytest.LogCaptureFixture,
    client: Client,
) -> None:
    """Found: any unexpected error in a drive left the run queued; the sweep drove it again
    every lease period, for ever, and its page said *Running*."""

    def broken(*args: Any) -> Any:
        return 1 / 0

    monkeypatch.setattr(editor.engine.runner, "resolve_names", broken)
    run_id = start(ECHO_CHAIN)
    drive_run.enqueue(run_id)

    with caplog.at_level(logging.INFO, logger="editor.tasks"):
        work_the_queue()

    run = Run.objects.get(pk=run_id)
    assert run.state == "failed"
    assert run.status == {
        "state": "failed",
        "error": "the worker stopped driving this run on an unexpected error "
        "(ZeroDivisionError); the worker's log has the details",
        "code": "internal_error",
    }
    assert kinds(run_id) == ["GraphRunStarted", "RunFailed"]
    assert (run.lease_owner, run.drive_attempts) == ("", 0)
    crash = next(r for r in caplog.records if "the drive raised ZeroDivisionError" in r.message)
    assert crash.levelno == logging.ERROR
    assert crash.exc_info is not None and crash.exc_info[0] is ZeroDivisionError
    # nothing is queued again, however long it waits
    long_ago(run_id)
    assert sweep_expired_leases() == 0
    # its page says so
    client.force_login(make_user("noel"))
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert "failed" in page
    assert "(ZeroDivisionError); the worker&#x27;s log has the details" in page


def test_a_drive_that_loses_the_database_is_driven_again_and_completes(
    monkeypatch: pytest.MonkeyPatch, work_the_queue: Callable[[], str]
) -> None:
    resolve = editor.engine.runner.resolve_names
    calls: list[int] = []

    def database_gone_once(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return resolve(*args)

    monkeypatch.setattr(editor.engine.runner, "resolve_names", database_gone_once)
    run_id = start(ECHO_CHAIN)

    with pytest.raises(OperationalError):
        drive_run.call(run_id)

    run = Run.objects.get(pk=run_id)
    assert (run.state, run.lease_owner, run.drive_attempts) == ("queued", "", 1)
    assert run.drive_error == "a database error (OperationalError)"
    long_ago(run_id)
    work_the_queue()  # the sweep queues it again at once (the first retry), and it completes
    run = Run.objects.get(pk=run_id)
    assert (run.state, run.drive_attempts, run.drive_error) == ("completed", 0, "")


# --- drives cut off ---------------------------------------------------------------------------


def test_a_run_whose_drives_are_cut_off_three_times_fails_naming_the_cause(
    settings: Any,
) -> None:
    settings.GATEHOUSE_RUN_RETRY_BACKOFF = 5
    run_id = start(ECHO_CHAIN)
    queued: list[Any] = []
    for attempt in (1, 2):
        cut_off(run_id)
        before = timezone.now()
        assert sweep_expired_leases() == 1
        task = DBTaskResult.objects.order_by("-enqueued_at").first()
        delay = task.run_after - before
        queued.append(timedelta(0) if delay > timedelta(days=365) else delay)  # "not deferred"
        assert state(run_id) == "queued", attempt
    # the first is driven again at once (its lease running out was the wait), the second
    # after the backoff
    assert queued[0] == timedelta(0)
    assert timedelta(seconds=4) < queued[1] <= timedelta(seconds=6)

    cut_off(run_id)
    assert sweep_expired_leases() == 0

    run = Run.objects.get(pk=run_id)
    assert run.state == "failed"
    assert run.status["error"] == (
        "the run's drive was cut off 3 times (each time its worker stopped, or lost its lease, "
        "before the run parked or ended); it is not driven again (GATEHOUSE_RUN_MAX_ATTEMPTS)"
    )
    assert run.status["code"] == "drive_cut_off"
    assert kinds(run_id) == ["GraphRunStarted", "RunFailed"]


def test_the_failure_names_the_database_when_the_last_drive_lost_it(settings: Any) -> None:
    settings.GATEHOUSE_RUN_MAX_ATTEMPTS = 1
    run_id = start(ECHO_CHAIN)
    store = OrmRunStore("worker-a")
    assert store.claim(run_id)
    store.release(run_id, error="a database error (OperationalError)")
    long_ago(run_id)

    assert sweep_expired_leases() == 0

    assert Run.objects.get(pk=run_id).status["error"] == (
        "the run's drive was cut off 1 time (the last one stopped on a database error "
        "(OperationalError)); it is not driven again (GATEHOUSE_RUN_MAX_ATTEMPTS)"
    )


def test_a_drive_that_parks_or_ends_starts_the_count_again(
    work_the_queue: Callable[[], str],
) -> None:
    run_id = start(ECHO_CHAIN)
    cut_off(run_id)
    cut_off(run_id)
    assert Run.objects.get(pk=run_id).drive_attempts == 2
    Run.objects.filter(pk=run_id).update(lease_owner="", lease_expires_at=None)
    drive_run.enqueue(run_id)

    work_the_queue()

    run = Run.objects.get(pk=run_id)
    assert (run.state, run.drive_attempts) == ("completed", 0)


# --- the watchdog ---------------------------------------------------------------------------


def test_the_watchdog_fails_a_run_whose_drive_is_stuck_past_its_wall_time(
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    work_the_queue: Callable[[], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A drive stuck in a blocking call of its own thread (here: a schema check), which the
    engine's checks between steps cannot reach."""
    settings.GATEHOUSE_RUN_WALL_TIME = 1
    settings.GATEHOUSE_RUN_WATCHDOG_GRACE = 1
    check = editor.engine.runner.first_violation
    release = threading.Event()
    stuck = threading.Event()

    def hangs(schema: Any, value: Any) -> Any:
        if value == {"hang": True}:
            stuck.set()
            release.wait(BOUND)
        return check(schema, value)

    monkeypatch.setattr(editor.engine.runner, "first_violation", hangs)
    run_id = start(CHECKED, {"hang": True})
    drive_run.enqueue(run_id)
    seen_while_stuck: list[str] = []

    def reported() -> bool:
        return any("its drive is stuck" in record.message for record in list(caplog.records))

    def watch() -> None:
        # from outside: the run is failed while its drive is still stuck, and the drive is
        # reported stuck a grace later; then it is let go
        from django.db import connection

        def current() -> str | None:
            # SQLite's shared test database may refuse a read while the worker writes.
            try:
                return state(run_id)
            except OperationalError:
                return None

        try:
            deadline = time.monotonic() + BOUND
            while time.monotonic() < deadline and current() != "failed":
                time.sleep(0.05)
            seen_while_stuck.append(current())
            while time.monotonic() < deadline and not reported():
                time.sleep(0.05)
        finally:
            connection.close()
            release.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    with caplog.at_level(logging.INFO, logger="editor.tasks"):
        work_the_queue()
    watcher.join()

    assert stuck.is_set()
    assert seen_while_stuck == ["failed"]
    run = Run.objects.get(pk=run_id)
    assert run.status == {
        "state": "failed",
        "error": "the run has been running for more than 1 s (GATEHOUSE_RUN_WALL_TIME) and its "
        "drive did not stop: the worker's watchdog ended it 1 s later "
        "(GATEHOUSE_RUN_WATCHDOG_GRACE)",
        "code": "limit_exceeded",
    }
    # the drive woke up later and wrote nothing
    assert kinds(run_id) == ["GraphRunStarted", "RunFailed"]
    assert run.lease_owner == ""
    stuck_report = next(r for r in caplog.records if "its drive is stuck" in r.message)
    assert "in hangs" in stuck_report.getMessage()  # where it is stuck
