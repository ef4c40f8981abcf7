"""A worker that loses the database (a restart) keeps its process: django-tasks-db's loop is
started again, and the sweeper and the heartbeat reconnect instead of failing forever on a dead
connection. The real outage, against PostgreSQL, is ``make faults``' business
(``tests/faults/test_database_restart.py``); these check the wiring."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError
from django_tasks_db.management.commands.db_worker import Command as WorkerCommand

from editor.management.commands import db_worker


def test_the_worker_loop_starts_again_after_losing_the_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[int] = []

    def handle(self: Any, *args: Any, **options: Any) -> None:
        attempts.append(1)
        if len(attempts) < 3:
            raise OperationalError("the connection is closed")

    monkeypatch.setattr(WorkerCommand, "handle", handle)
    monkeypatch.setattr(db_worker, "OUTAGE_RETRY_SECONDS", 0)

    db_worker.Command().work_through_outages()

    assert len(attempts) == 3


def test_a_failure_that_is_not_the_database_still_stops_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def handle(self: Any, *args: Any, **options: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(WorkerCommand, "handle", handle)
    with pytest.raises(RuntimeError):
        db_worker.Command().work_through_outages()


def test_a_failed_sweep_drops_its_connection_so_the_next_one_reconnects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[bool] = []

    def sweep() -> int:
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(db_worker, "sweep_expired_leases", sweep)
    monkeypatch.setattr(db_worker.connection, "close", lambda: closed.append(True))

    assert db_worker.sweep_once() == 0
    assert closed == [True]
