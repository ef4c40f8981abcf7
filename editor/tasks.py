"""Driving runs in the background (spec 04 *Durability*, spec 07 *Workers*).

``db_worker`` (django-tasks-db) dispatches :func:`drive_run` tasks; the task claims the run's
lease (:class:`editor.store.OrmRunStore`), keeps it alive from a heartbeat thread while the
engine drives, and gives it up when the run parks, ends, or is lost to another worker.

The queue only dispatches. A run's durability lives in its lease and its event log: a task
that is lost (its worker killed) leaves the lease to run out, and :func:`sweep_expired_leases`,
which every worker runs, queues the run again; the next driver continues after the last
recorded event.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.tasks import task
from django.utils import timezone

from editor.engine import PARKED, Engine
from editor.engine.ports import Envelope
from editor.models import Run
from editor.services import notifications
from editor.services.installation import installation, limits
from editor.store import DRIVABLE, OrmRunStore

__all__ = [
    "AnnouncingRunStore",
    "drive_run",
    "enqueue_run",
    "new_owner",
    "notify_approvers",
    "notify_operators",
    "queue_notification",
    "queue_operator_notification",
    "sweep_expired_leases",
]

logger = logging.getLogger(__name__)

_PARKED = frozenset(state.value for state in PARKED)


def new_owner() -> str:
    """A lease owner id no other driver shares: ``host:pid:thread:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


class _Heartbeat(threading.Thread):
    """Renews a lease every third of its length until stopped."""

    def __init__(self, store: OrmRunStore, run_id: str, every: float) -> None:
        super().__init__(name=f"lease-{run_id}", daemon=True)
        self.store, self.run_id, self.every = store, run_id, every
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.every):
                try:
                    if not self.store.renew(self.run_id):
                        logger.warning("run %s: lease lost to another worker", self.run_id)
                        return
                except Exception:  # a failed renewal is retried; the lease has slack
                    logger.exception("run %s: could not renew the lease", self.run_id)
                    # The connection may be dead (the database restarted): the next renewal
                    # opens a new one instead of failing on the broken one forever.
                    connection.close()
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


@task()
def drive_run(run_id: str) -> str | None:
    """Drive one run until it parks or ends. Returns the state it left the run in, or
    ``None`` when another worker drives it (or nothing needs to)."""
    lease_seconds = settings.GATEHOUSE_RUN_LEASE_SECONDS
    store = AnnouncingRunStore(new_owner(), lease_seconds, on_suspended=queue_notification)
    if not store.claim(run_id):
        logger.info("run %s: not claimed (driven elsewhere, or not waiting)", run_id)
        return None
    logger.info("run %s: driving (lease %s)", run_id, store.owner)
    heartbeat = _Heartbeat(store, run_id, lease_seconds / 3)
    heartbeat.start()
    try:
        engine = Engine(store, installation(), limits=limits())
        state = engine.drive(run_id)
    finally:
        heartbeat.stop()
        store.release(run_id)
    logger.info("run %s: left %s", run_id, state)
    if state in _PARKED and Run.objects.filter(id=run_id, state__in=DRIVABLE).exists():
        # Resolved while this worker was letting go: the resume's task found the run still
        # leased and left it, so it is queued again here rather than waiting for the sweep.
        drive_run.enqueue(run_id)
    return state


@task()
def notify_approvers(run_id: str, seq: int) -> int:
    """Email the approvers about one suspension (spec 07); how many messages were sent."""
    return notifications.notify_suspension(run_id, seq)


def queue_notification(run_id: str, seq: int) -> None:
    """Called once a ``Suspended`` event has committed: the mail goes out from its own task,
    so a slow mail server never holds a run's lease. Without email configured, nothing."""
    if notifications.email_configured():
        notify_approvers.enqueue(str(run_id), int(seq))


@task()
def notify_operators(run_id: str, seq: int) -> int:
    """Email the operators about one budget or reconciliation card; how many were sent."""
    return notifications.notify_operator_card(run_id, seq)


def queue_operator_notification(run_id: str, seq: int) -> None:
    """Called once a ``BudgetExceeded`` or ``ReconciliationNeeded`` event has committed."""
    if notifications.email_configured():
        notify_operators.enqueue(str(run_id), int(seq))


class AnnouncingRunStore(OrmRunStore):
    """The driver's store: after each append that opens a budget or reconciliation card,
    the operators' email is queued once the append has committed (a position in the log
    commits once, so each card is announced once), as ``on_suspended`` does for gates."""

    def append(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        super().append(run_id, events, status)
        for envelope in events:
            if envelope.kind in notifications.OPERATOR_CARDS:
                transaction.on_commit(
                    lambda seq=envelope.seq: queue_operator_notification(run_id, seq), robust=True
                )


def enqueue_run(run_id: str) -> None:
    """Hand the run to a worker once the current transaction (which recorded it) commits."""
    transaction.on_commit(lambda: drive_run.enqueue(str(run_id)))


def sweep_expired_leases() -> int:
    """Queue again every run that wants a driver and has none: its lease ran out (its worker
    died), or it was never claimed within a lease period (its task was lost). Returns how
    many runs were queued.

    Each is first given a fresh, ownerless lease by a conditional update, so of several
    workers sweeping at once exactly one queues it, and the next sweep leaves it alone until
    that lease runs out too (when its task was lost again).
    """
    lease = timedelta(seconds=settings.GATEHOUSE_RUN_LEASE_SECONDS)
    now = timezone.now()
    stranded = Q(lease_expires_at__lt=now) | Q(
        lease_expires_at__isnull=True, updated_at__lt=now - lease
    )
    candidates = list(
        Run.objects.filter(stranded, state__in=DRIVABLE).values_list("id", "lease_expires_at")
    )
    queued = 0
    for run_id, expires_at in candidates:
        taken = Run.objects.filter(
            id=run_id, state__in=DRIVABLE, lease_expires_at=expires_at
        ).update(lease_owner="", lease_expires_at=now + lease)
        if taken:
            drive_run.enqueue(str(run_id))
            queued += 1
            logger.info("run %s: lease ran out, queued again", run_id)
    return queued
