"""``manage.py db_worker``: django-tasks-db's worker, which also sweeps for stranded runs.

django-tasks-db does not recover a task whose worker died (spec 04 *Durability*): every worker
here also runs :func:`editor.tasks.sweep_expired_leases`, from a daemon thread every
``GATEHOUSE_SWEEP_SECONDS``, so a run whose lease ran out is queued again, and between sweeps
:func:`editor.tasks.wake_due_runs` every ``GATEHOUSE_WAKE_POLL_SECONDS``, so a sleeping run whose
own drive was lost still wakes within about that of its ``wake_at`` (spec 08), and
:func:`editor.tasks.act_on_due_deadlines`, so an inbox card's reminder or due time whose own
task was lost is acted on a few seconds after it came. With ``--batch``
(tests, one-off catch-up) it sweeps once before working through the queue instead.
When the database goes away (a restart), the worker keeps its process and starts its loop
again once the database answers, rather than exiting as django-tasks-db's worker does.
The tool registry is built before any work (with the short listing of each MCP server), so a
registry that cannot be built stops the worker at once with its message.
Without ``--batch`` a drive stuck past its run's wall time ends the process (exit status 70,
see :mod:`editor.watchdog`): run workers under a supervisor that starts them again.
The options are django-tasks-db's own; ``--interval`` defaults to ``GATEHOUSE_WORKER_POLL_MS``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands.db_worker import Command as WorkerCommand

from editor import watchdog
from editor.services.installation import tools
from editor.tasks import act_on_due_deadlines, sweep_expired_leases, wake_due_runs
from editor.tools import ToolRegistryError
from editor.tools.mcp import CatalogueError

logger = logging.getLogger("editor.tasks")

#: Seconds between attempts to reach the database again after the worker lost it.
OUTAGE_RETRY_SECONDS = 1.0


class Sweeper(threading.Thread):
    """Calls :func:`sweep_expired_leases` every ``every`` seconds, and between two sweeps
    :func:`wake_due_runs` every ``wake_every`` seconds, until stopped."""

    def __init__(self, every: float, wake_every: float) -> None:
        super().__init__(name="lease-sweeper", daemon=True)
        self.every = every
        self.wake_every = min(wake_every, every)
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            next_sweep = time.monotonic()
            while not self.stopped.is_set():
                if time.monotonic() >= next_sweep:
                    sweep_once()  # the sweep wakes the due runs too
                    next_sweep = time.monotonic() + self.every
                else:
                    wake_once()
                self.stopped.wait(self.wake_every)
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def sweep_once() -> int:
    try:
        return sweep_expired_leases()
    except Exception:  # the database may be briefly unavailable; the next sweep tries again
        logger.exception("the sweep for expired run leases failed")
        # on a new connection: the database may have restarted, leaving this one broken
        connection.close()
        return 0


def wake_once() -> int:
    """Wake the sleeping runs past their ``wake_at``, and act on the cards' deadlines whose
    own task was lost: what each worker does between sweeps."""
    woken = 0
    try:
        woken = wake_due_runs()
    except Exception:  # as for the sweep: the next poll tries again, on a new connection
        logger.exception("the look for sleeping runs past their wake_at failed")
        connection.close()
    deadlines_once()
    return woken


def deadlines_once() -> int:
    try:
        return act_on_due_deadlines()
    except Exception:  # the next poll tries again, on a new connection
        logger.exception("the look for the inbox's deadlines that came failed")
        connection.close()
        return 0


class Command(WorkerCommand):
    help = (
        "Run a database background worker: drives runs, and queues again every run whose "
        "worker's lease ran out"
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        # An idle worker looks at the queue every GATEHOUSE_WORKER_POLL_MS, not every second
        # (django-tasks-db's default): a run just started waits for a worker at most that long.
        parser.set_defaults(interval=settings.GATEHOUSE_WORKER_POLL_MS / 1000)

    def configure_logging(self, verbosity: int) -> None:
        super().configure_logging(verbosity)
        # What happens to runs (driven, left parked or ended, queued again) shows beside the
        # worker's own lines, at the same verbosity.
        levels = {0: logging.CRITICAL, 1: logging.INFO}
        logger.setLevel(levels.get(verbosity, logging.DEBUG))
        if not logger.hasHandlers():
            logger.addHandler(logging.StreamHandler(self.stdout))

    def handle(self, *args: Any, **options: Any) -> None:
        batch = options.get("batch", False)
        reload = options.get("reload", False) and not batch
        # With --reload the first process only watches files and restarts the second, which
        # does the work: only the process that works sweeps.
        if reload and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true":
            super().handle(*args, **options)
            return
        # The registry at start-up: a bad GATEHOUSE_MCP_SERVERS, a tool name two servers offer
        # or a broken tool module stops the worker here, naming it, not a run later.
        try:
            tools()
        except (CatalogueError, ToolRegistryError) as error:
            raise CommandError(str(error)) from None
        if batch:
            sweep_once()
            deadlines_once()
            super().handle(*args, **options)
            return
        # A long-running worker: a drive stuck past its run's wall time and the watchdog's
        # grace ends the process, for its supervisor to start a fresh one (editor.watchdog).
        watchdog.exit_when_stuck = True
        sweeper = Sweeper(settings.GATEHOUSE_SWEEP_SECONDS, settings.GATEHOUSE_WAKE_POLL_SECONDS)
        sweeper.start()
        try:
            self.work_through_outages(*args, **options)
        finally:
            sweeper.stop()

    def work_through_outages(self, *args: Any, **options: Any) -> None:
        """django-tasks-db's worker loop, started again when the database goes away under it
        (a restart, a fail-over) instead of letting the process exit. The run it was driving
        keeps its event log; its lease runs out and a sweep queues it again."""
        while True:
            try:
                super().handle(*args, **options)
                return
            except DatabaseError:
                logger.exception(
                    "the worker lost the database; it tries again in %s s", OUTAGE_RETRY_SECONDS
                )
                for each in connections.all(initialized_only=True):
                    with contextlib.suppress(Exception):
                        each.close()
                time.sleep(OUTAGE_RETRY_SECONDS)
