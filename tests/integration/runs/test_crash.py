"""A worker killed in the middle of a run (``kill -9``): another worker takes the run over once
its lease runs out and continues after the last recorded event (spec 04, *Durability*).

Real ``manage.py db_worker`` processes share a SQLite file, as on one machine; the tool waits
for a file, so the test kills the worker while the call is in flight and then lets the call
finish for the next worker. (These tests run on SQLite in both CI passes: what they check is
the lease and the re-drive, which the store tests check on each engine.)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
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
    """A migrated SQLite file, and the environment of the workers that share it: the test
    tools registered, a two-second lease and a sweep every second."""
    path = tmp_path_factory.mktemp("crash") / "db.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{path}",
        "GATEHOUSE_TOOL_MODULES": "tests.integration.runs.slow_tools",
        "GATEHOUSE_RUN_LEASE_SECONDS": "2",
        "GATEHOUSE_SWEEP_SECONDS": "1",
    }
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr
    return env


@pytest.fixture
def workers(
    environment: dict[str, str], tmp_path: Path
) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Starts ``db_worker`` processes; stops whichever are left at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start_worker() -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(started)}.log").open("wb")
        process = subprocess.Popen(
            [*WORKER, "--interval", "0.1"],
            cwd=settings.BASE_DIR,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process

    yield start_worker
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=BOUND)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def start_run(environment: dict[str, str], tool: str, tmp_path: Path) -> str:
    """A queued run of ``call`` (``tool``) → ``after`` (echo), handed to the queue; its id."""
    tool_input = {"release": str(tmp_path / "release"), "calls": str(tmp_path / "calls")}
    code = (
        "from editor.tasks import drive_run\n"
        "from tests.integration.runs.starting import one_tool, start\n"
        f"run_id = start(one_tool({tool!r}), {tool_input!r})\n"
        "drive_run.enqueue(run_id)\n"
        "print('RUN', run_id)\n"
    )
    started = manage("shell", "--no-imports", "-c", code, env=environment)
    assert started.returncode == 0, started.stderr
    return started.stdout.split("RUN ")[-1].strip()


def database_of(environment: dict[str, str]) -> str:
    return environment["DATABASE_URL"].removeprefix("sqlite:///")


def events(environment: dict[str, str], run_id: str) -> list[tuple[int, str, str]]:
    """The run's log as (seq, kind, payload JSON), read straight from the file."""
    with sqlite3.connect(database_of(environment)) as db:
        return db.execute(
            "SELECT seq, kind, payload FROM editor_runevent WHERE run_id = ? ORDER BY seq",
            (run_id.replace("-", ""),),
        ).fetchall()


def run_state(environment: dict[str, str], run_id: str) -> str:
    with sqlite3.connect(database_of(environment)) as db:
        (state,) = db.execute(
            "SELECT state FROM editor_run WHERE id = ?", (run_id.replace("-", ""),)
        ).fetchone()
    return state


def wait_until(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting until {what}"
        time.sleep(0.05)


def kill_during_the_tool_call(
    environment: dict[str, str],
    workers: Callable[[], subprocess.Popen[bytes]],
    tmp_path: Path,
    tool: str,
) -> str:
    """Start a run of ``tool``; kill its worker once the call is recorded and under way;
    release the call; start a second worker. The run's id."""
    first = workers()
    run_id = start_run(environment, tool, tmp_path)
    calls = tmp_path / "calls"
    wait_until(
        lambda: "ToolCallRequested" in [kind for _, kind, _ in events(environment, run_id)],
        "the tool call was recorded",
    )
    wait_until(calls.exists, "the tool was called")
    first.kill()  # SIGKILL: no clean-up, the lease is left to run out
    first.wait()
    (tmp_path / "release").touch()
    workers()
    return run_id


def test_a_run_whose_worker_was_killed_completes_on_another_worker_without_a_repeat(
    environment: dict[str, str], workers: Callable[[], subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    run_id = kill_during_the_tool_call(environment, workers, tmp_path, "hold")

    wait_until(lambda: run_state(environment, run_id) == "completed", "the run completed")

    log = events(environment, run_id)
    kinds = [kind for _, kind, _ in log]
    assert [seq for seq, _, _ in log] == list(range(len(log)))  # no gap, no repeat
    assert kinds == [
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
    entered = Counter(payload for _, kind, payload in log if kind == "NodeEntered")
    assert all(count == 1 for count in entered.values())
    # The interrupted call was made again, with the same idempotency key, and recorded once.
    keys = (tmp_path / "calls").read_text().split()
    assert len(keys) == 2
    assert keys[0] == keys[1]


def test_a_write_interrupted_by_a_killed_worker_is_not_repeated_but_waits_for_a_person(
    environment: dict[str, str], workers: Callable[[], subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    run_id = kill_during_the_tool_call(environment, workers, tmp_path, "hold_write")

    wait_until(
        lambda: run_state(environment, run_id) == "needs_reconciliation",
        "the run waited for a reconciliation",
    )

    log = events(environment, run_id)
    assert [seq for seq, _, _ in log] == list(range(len(log)))
    assert [kind for _, kind, _ in log] == [
        "GraphRunStarted",
        "NodeEntered",
        "ToolCallRequested",
        "ReconciliationNeeded",
    ]
    assert len((tmp_path / "calls").read_text().split()) == 1  # the write was not run again
