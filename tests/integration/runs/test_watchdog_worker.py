"""The watchdog in real ``manage.py db_worker`` processes (docs/engine.md, *The watchdog*): a
drive stuck past its run's wall time cannot hold its worker for ever. The worker fails the run
and exits for its supervisor to start a fresh one; a drive that holds the interpreter lock is
stopped by ``faulthandler``'s timer, and the run fails once its drives ran out."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.integration.commands import manage

WORKER = (sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay")
BOUND = 90.0  # seconds: far beyond what each wait takes, so only a real hang fails


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A migrated SQLite file; workers with a one-second wall time and grace, the hanging
    schema check registered, a two-second lease and a sweep every second."""
    path = tmp_path_factory.mktemp("watchdog") / "db.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{path}",
        "GATEHOUSE_TOOL_MODULES": "tests.integration.runs.hanging_tools",
        "GATEHOUSE_RUN_WALL_TIME": "1",
        "GATEHOUSE_RUN_WATCHDOG_GRACE": "1",
        "GATEHOUSE_RUN_LEASE_SECONDS": "2",
        "GATEHOUSE_SWEEP_SECONDS": "1",
        "GATEHOUSE_RUN_MAX_ATTEMPTS": "1",
    }
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr
    return env


@pytest.fixture
def workers(
    environment: dict[str, str], tmp_path: Path
) -> Iterator[Callable[[], tuple[subprocess.Popen[bytes], Path]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start_worker() -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"worker-{len(started)}.log"
        process = subprocess.Popen(
            [*WORKER, "--interval", "0.1"],
            cwd=settings.BASE_DIR,
            env=environment,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process, log

    yield start_worker
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()


def start_run(environment: dict[str, str], hang: str) -> str:
    code = (
        "from editor.tasks import drive_run\n"
        "from tests.integration.runs.starting import start\n"
        "from tests.integration.runs.test_runs_always_end import CHECKED\n"
        f"run_id = start(CHECKED, {{'hang': {hang!r}}})\n"
        "drive_run.enqueue(run_id)\n"
        "print('RUN', run_id)\n"
    )
    started = manage("shell", "--no-imports", "-c", code, env=environment)
    assert started.returncode == 0, started.stderr
    return started.stdout.split("RUN ")[-1].strip()


def status_of(environment: dict[str, str], run_id: str) -> tuple[str, str]:
    with sqlite3.connect(environment["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        row = db.execute(
            "SELECT state, status FROM editor_run WHERE id = ?", (run_id.replace("-", ""),)
        ).fetchone()
    return row[0], row[1]


def wait_for_exit(process: subprocess.Popen[bytes]) -> int:
    return process.wait(timeout=BOUND)


def wait_until(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting until {what}"
        time.sleep(0.1)


def test_a_worker_whose_drive_is_stuck_in_a_blocking_call_fails_the_run_and_exits(
    environment: dict[str, str], workers: Callable[[], tuple[subprocess.Popen[bytes], Path]]
) -> None:
    worker, log = workers()
    run_id = start_run(environment, "blocking")

    assert wait_for_exit(worker) == 70

    state, status = status_of(environment, run_id)
    assert state == "failed"
    assert "the worker's watchdog ended it 1 s later (GATEHOUSE_RUN_WATCHDOG_GRACE)" in status
    output = log.read_text()
    assert "its drive is stuck and does not stop; the worker exits (status 70)" in output
    assert "in hangs" in output  # where it was stuck


def test_a_drive_that_holds_the_interpreter_lock_is_stopped_and_its_run_fails(
    environment: dict[str, str], workers: Callable[[], tuple[subprocess.Popen[bytes], Path]]
) -> None:
    worker, log = workers()
    run_id = start_run(environment, "interpreter")

    assert wait_for_exit(worker) != 0
    assert "Timeout" in log.read_text()  # faulthandler's dump of every thread
    assert status_of(environment, run_id)[0] != "failed"  # the watchdog could not run

    # the next worker's sweep finds the lease run out: its one drive was cut off
    workers()
    wait_until(lambda: status_of(environment, run_id)[0] == "failed", "the run failed")
    assert "the run's drive was cut off 1 time" in status_of(environment, run_id)[1]
