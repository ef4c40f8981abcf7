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

import contextlib
import functools
import logging
import os
import socket
import threading
import uuid
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.tasks import TaskResultStatus, task
from django.tasks.exceptions import TaskResultDoesNotExist
from django.utils import timezone
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from editor.drives import enqueue_run, queue_drive
from editor.engine import PARKED, Engine, RunState
from editor.engine.ports import Envelope
from editor.models import Run
from editor.services.inbox import deadlines, notices, notifications, webhooks
from editor.services.installation import installation, limits
from editor.services.runs import failures as run_failures
from editor.store import DRIVABLE, OrmRunStore, StrandedRun
from editor.watchdog import Watchdog

__all__ = [
    "AnnouncingRunStore",
    "act_on_deadline",
    "act_on_due_deadlines",
    "drive_run",
    "enqueue_run",
    "mail_deadline_notice",
    "new_owner",
    "notify_approvers",
    "notify_operators",
    "post_deadline_notice",
    "queue_deadline_notice",
    "queue_drive",
    "queue_notification",
    "queue_operator_notification",
    "retry_delay",
    "sweep_expired_leases",
    "wake_due_runs",
]

logger = logging.getLogger(__name__)

_PARKED = frozenset(state.value for state in PARKED)
#: Ids per query when the sweep asks about a whole backlog (SQLite takes at most 32,766).
_CHUNK = 1000


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
    ``None`` when another worker drives it (or nothing needs to).

    Every way a drive can end leaves the run on record: one that raises an unexpected error
    fails the run (``internal_error``; the traceback goes to this log); one that loses the
    database leaves the run to the sweep, which drives it again after a backoff and fails it
    after ``GATEHOUSE_RUN_MAX_ATTEMPTS`` cut-off drives; one past its wall time and the
    watchdog's grace is failed by the watchdog (:mod:`editor.watchdog`)."""
    lease_seconds = settings.GATEHOUSE_RUN_LEASE_SECONDS
    store = AnnouncingRunStore(new_owner(), lease_seconds, on_suspended=queue_notification)
    if not store.claim(run_id):
        logger.info("run %s: not claimed (driven elsewhere, or not waiting)", run_id)
        _wake_later(run_id, only_if_early=True)  # a task that came before the wake_at
        return None
    logger.info("run %s: driving (lease %s)", run_id, store.owner)
    heartbeat = _Heartbeat(store, run_id, lease_seconds / 3)
    heartbeat.start()
    watchdog = Watchdog(
        run_id,
        lambda: _overrun(run_id, store),
        wall_time=float(settings.GATEHOUSE_RUN_WALL_TIME),
        grace=float(settings.GATEHOUSE_RUN_WATCHDOG_GRACE),
    )
    watchdog.start()
    error: Exception | None = None
    try:
        engine = Engine(store, installation(), limits=limits())
        state: str | None = engine.drive(run_id, started=watchdog.started)
    except Exception as raised:  # a worker's shutdown (SystemExit…) leaves the lease to run out
        error = raised
        state = _crashed(run_id, raised, store)
    finally:
        watchdog.stop()
        heartbeat.stop()
    if error is not None and _transient(error):
        store.release(run_id, error=_describe(error))
        raise error
    store.release(run_id, clean=True)
    logger.info("run %s: left %s", run_id, state)
    if state == RunState.SLEEPING.value:
        _wake_later(run_id)
    if state in _PARKED and Run.objects.filter(id=run_id, state__in=DRIVABLE).exists():
        # Resolved while this worker was letting go: the resume's task found the run still
        # leased and left it, so it is queued again here rather than waiting for the sweep.
        queue_drive(run_id)
    return state


def _wake_later(run_id: str, *, only_if_early: bool = False) -> None:
    """Queue the sleeping run's next drive for its recorded ``wake_at`` (spec 08). A drive
    that comes early appends nothing and lands here again; each worker's sweep is the safety
    net for a task that is lost."""
    wake_at = (
        Run.objects.filter(id=run_id, state=RunState.SLEEPING.value)
        .values_list("wake_at", flat=True)
        .first()
    )
    if wake_at is not None and not (only_if_early and wake_at <= timezone.now()):
        queue_drive(run_id, wake_at)
        logger.info("run %s: sleeps until %s", run_id, wake_at.isoformat())


def _overrun(run_id: str, store: OrmRunStore) -> None:
    """The watchdog's move, on its own thread: take the run from the drive, and fail it."""
    store.revoke()  # whatever the drive does when it wakes up, it writes nothing
    logger.error(
        "run %s: its drive is still going %s s past the run's wall time; the watchdog ends it",
        run_id,
        settings.GATEHOUSE_RUN_WATCHDOG_GRACE,
    )
    _fail(run_id, run_failures.overrun_message(), run_failures.OVERRAN, store)


def _transient(error: BaseException) -> bool:
    """A lost database (a restart, a fail-over): the run is driven again later. Anything else
    is the drive's own failure, which driving again would only repeat."""
    return isinstance(error, (OperationalError, InterfaceError))


def _describe(error: BaseException) -> str:
    return f"a database error ({type(error).__name__})"


def _crashed(run_id: str, error: BaseException, store: OrmRunStore) -> str | None:
    """The drive raised: log it with its traceback; fail the run unless the database was
    lost (the sweep drives it again then, counting the attempt)."""
    trace = (type(error), error, error.__traceback__)
    if _transient(error):
        logger.error(
            "run %s: the drive lost the database (%s); the run is driven again later",
            run_id,
            type(error).__name__,
            exc_info=trace,
        )
        return None
    logger.error(
        "run %s: the drive raised %s; the run fails", run_id, type(error).__name__, exc_info=trace
    )
    if _fail(run_id, run_failures.crash_message(error), run_failures.CRASHED, store):
        return "failed"
    return Run.objects.filter(id=run_id).values_list("state", flat=True).first()


def _fail(run_id: str, message: str, code: str, store: OrmRunStore) -> bool:
    """Fail the run as the lease holder, on a store of its own (the drive's may be revoked);
    whether the failure was recorded."""
    try:
        return run_failures.fail_run(
            run_id, message, code, OrmRunStore(store.owner, store.lease_seconds)
        )
    except Exception:  # the sweep fails it after its attempts when this cannot
        logger.exception("run %s: its failure could not be recorded", run_id)
        connection.close()
        return False


#: How many times a notice (a new card's email, a deadline's email or webhook) is tried for
#: someone before it is given up (the run's log and the decision log keep what it announced
#: either way), and the wait before the second try, doubled each time after: tries at 0 s,
#: 30 s, 1.5 min, 3.5 min and 7.5 min.
NOTICE_ATTEMPTS = 5
NOTICE_RETRY_SECONDS = 30


def notice_delay(attempt: int) -> timedelta:
    """How long a notice waits after its ``attempt``-th try failed for someone."""
    return timedelta(seconds=NOTICE_RETRY_SECONDS * 2 ** (attempt - 1))


def _try_again(
    task_: Any, args: tuple[Any, ...], attempt: int, missed: list[Any], who: str
) -> None:
    """Queue ``task_`` (with ``args``) again for those it ``missed`` (addresses, webhook
    positions) after :func:`notice_delay`, unless this was its last attempt. The log counts
    them and never names them (an address is a person's)."""
    if not missed:
        return
    what = f"{task_.name} {':'.join(str(arg) for arg in args)}"
    if attempt >= NOTICE_ATTEMPTS:
        logger.error("%s: %d %s not reached after %d tries", what, len(missed), who, attempt)
        return
    later = timezone.now() + notice_delay(attempt)
    task_.using(run_after=later).enqueue(*args, attempt=attempt + 1, only=missed)
    logger.warning(
        "%s: %d %s not reached, to be tried again at %s", what, len(missed), who, later.isoformat()
    )


@task()
def notify_approvers(run_id: str, seq: int, attempt: int = 1, only: list[str] | None = None) -> int:
    """Email the approvers about one suspension (spec 07); how many messages were sent. Those
    the mail server did not take are tried again later (``only``: them)."""
    sent, failed = notifications.notify_suspension(run_id, seq, only)
    _try_again(notify_approvers, (str(run_id), int(seq)), attempt, failed, "approver(s)")
    return sent


def queue_notification(run_id: str, seq: int) -> None:
    """Called once a ``Suspended`` event has committed: the mail goes out from its own task,
    so a slow mail server never holds a run's lease. Without email configured, nothing."""
    if notifications.email_configured():
        notify_approvers.enqueue(str(run_id), int(seq))


@task()
def notify_operators(run_id: str, seq: int, attempt: int = 1, only: list[str] | None = None) -> int:
    """Email the operators about one budget or reconciliation card; how many were sent. Those
    the mail server did not take are tried again later (``only``: them)."""
    sent, failed = notifications.notify_operator_card(run_id, seq, only)
    _try_again(notify_operators, (str(run_id), int(seq)), attempt, failed, "operator(s)")
    return sent


def queue_operator_notification(run_id: str, seq: int) -> None:
    """Called once a ``BudgetExceeded`` or ``ReconciliationNeeded`` event has committed."""
    if notifications.email_configured():
        notify_operators.enqueue(str(run_id), int(seq))


@task()
def act_on_deadline(run_id: str, seq: int, kind: str) -> str:
    """Act on a card's deadline (``remind`` or ``expire``), queued for its instant when the
    card was made (``editor.waiting``): once, whoever comes first (the sweep's safety net
    included). What it did, or why it did nothing."""
    outcome = deadlines.act(str(run_id), int(seq), str(kind))
    logger.info("run %s: the %s deadline of %s: %s", run_id, kind, seq, outcome)
    return outcome


def act_on_due_deadlines() -> int:
    """The sweep's safety net for deadlines whose task was lost (a worker's restart, a queue
    wiped): act on every deadline past its instant by more than the grace its own task is
    given; how many were acted on. With none due, two indexed queries."""
    acted = 0
    for run_id, seq, kind in deadlines.due_deadlines(timezone.now()):
        outcome = deadlines.act(run_id, seq, kind)
        if outcome not in ("done", "gone", "early"):
            acted += 1
            logger.info("run %s: the %s deadline of %s (swept): %s", run_id, kind, seq, outcome)
    return acted


@task()
def mail_deadline_notice(
    run_id: str, seq: int, kind: str, attempt: int = 1, only: list[str] | None = None
) -> int:
    """Email a deadline's notice (reminder, escalation, resolution, overdue); how many were
    sent. The people the mail server did not take are tried again later (``only``: them)."""
    args = (str(run_id), int(seq), str(kind))
    sent, failed = notices.mail_notice(*args, only=only)
    _try_again(mail_deadline_notice, args, attempt, failed, "recipient(s)")
    return sent


@task()
def post_deadline_notice(
    run_id: str, seq: int, kind: str, attempt: int = 1, only: list[int] | None = None
) -> int:
    """Send a deadline's notice to the webhooks (``GATEHOUSE_WEBHOOKS``); how many took it.
    A webhook that did not answer, or answered ``429`` or ``5xx``, is tried again later with
    the same ``Idempotency-Key``."""
    args = (str(run_id), int(seq), str(kind))
    delivered, again = notices.post_notice(*args, only=only)
    _try_again(post_deadline_notice, args, attempt, again, "webhook(s)")
    return delivered


def queue_deadline_notice(run_id: str, seq: int, kind: str) -> None:
    """Queue a deadline's notice in the deadline's own transaction (``editor.waiting``): by
    email when a mail server is configured, to the webhooks when some are listed."""
    if notifications.email_configured():
        mail_deadline_notice.enqueue(str(run_id), int(seq), str(kind))
    if webhooks.webhooks_configured():
        post_deadline_notice.enqueue(str(run_id), int(seq), str(kind))


class AnnouncingRunStore(OrmRunStore):
    """The driver's store: after each append that opens a budget or reconciliation card,
    the operators' email is queued once the append has committed (a position in the log
    commits once, so each card is announced once), as ``on_suspended`` does for gates."""

    def append(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        super().append(run_id, events, status)
        for envelope in events:
            if envelope.kind in notifications.OPERATOR_CARDS:
                transaction.on_commit(
                    functools.partial(queue_operator_notification, run_id, envelope.seq),
                    robust=True,
                )


def _waiting_in_queue(task_ids: Collection[str]) -> set[str]:
    """Which of these ``drive_run`` tasks still wait in the queue, not yet taken by a worker.

    The database backend answers for all of them in one query; another backend that can look
    its results up is asked for each; one that cannot is assumed to have lost them all (the
    sweep then queues a task a lease period, as it did before it could ask)."""
    wanted = [task_id for task_id in task_ids if task_id]
    backend = drive_run.get_backend()
    if not wanted or not backend.supports_get_result:
        return set()
    if isinstance(backend, DatabaseBackend):
        valid = []
        for task_id in wanted:
            with contextlib.suppress(ValueError):
                valid.append(uuid.UUID(task_id))
        found: set[str] = set()
        for start in range(0, len(valid), _CHUNK):
            ready = DBTaskResult.objects.filter(
                id__in=valid[start : start + _CHUNK], status=TaskResultStatus.READY
            )
            found.update(str(task_id) for task_id in ready.values_list("id", flat=True))
        return found
    waiting = set()
    for task_id in wanted:
        try:
            result = backend.get_result(task_id)
        except TaskResultDoesNotExist:
            continue
        if result.status == TaskResultStatus.READY:
            waiting.add(task_id)
    return waiting


def sweep_expired_leases() -> int:
    """Queue again every run that wants a driver and has none: its lease ran out (its worker
    died), or it was never claimed within a lease period and its task no longer waits in the
    queue (the task was lost), or it sleeps past its ``wake_at`` with no drive taking it.
    Returns how many runs were queued.

    A run whose task still waits in the queue (a backlog longer than a lease period) gets no
    second task: it is given a fresh, ownerless lease, so the sweep asks again a lease period
    later. Each run to queue is first given such a lease by a conditional update, so of several
    workers sweeping at once exactly one queues it. A run whose drives were cut off
    ``GATEHOUSE_RUN_MAX_ATTEMPTS`` times is failed instead, naming the cause; the others are
    driven again after a backoff (:func:`retry_delay`).
    """
    store = OrmRunStore(lease_seconds=settings.GATEHOUSE_RUN_LEASE_SECONDS)
    now = timezone.now()
    return _queue_again(store, store.stranded_runs(now), now)


def wake_due_runs() -> int:
    """The waker (spec 08): queue a drive for every sleeping run whose recorded ``wake_at``
    has passed and that no driver holds, as the sweep would, but only those, so that every
    worker can look every ``GATEHOUSE_WAKE_POLL_SECONDS``. Returns how many were queued.

    Each run's own drive was queued for its ``wake_at`` when it went to sleep, and is usually
    taken first; a run whose task still waits in the queue gets no second one (it is held for
    a lease period, as in the sweep), so only a lost task costs a new one. With nothing due
    it costs one query on the ``wake_at`` index."""
    store = OrmRunStore(lease_seconds=settings.GATEHOUSE_RUN_LEASE_SECONDS)
    now = timezone.now()
    due = store.due_sleepers(now)
    return _queue_again(store, due, now) if due else 0


def _queue_again(store: OrmRunStore, candidates: Sequence[StrandedRun], now: datetime) -> int:
    """Queue each of these runs found without a driver once, across every worker looking at
    once; the ones whose task still waits in the queue are held instead."""
    # A run no driver ever took since its task was queued, whose task still waits.
    waiting = _waiting_in_queue([run.queue_task for run in candidates if not run.owner])
    store.hold_unclaimed(
        [run.id for run in candidates if not run.owner and run.queue_task in waiting], now
    )
    queued = 0
    for run in candidates:
        if not run.owner and run.queue_task in waiting:
            continue
        delay = retry_delay(run.attempts)
        if not store.reclaim(run.id, run.expires_at, now + delay + store.lease):
            continue
        if run.attempts >= settings.GATEHOUSE_RUN_MAX_ATTEMPTS:
            message = run_failures.cut_off_message(run.attempts, run.last_error)
            run_failures.fail_run(run.id, message, run_failures.CUT_OFF, OrmRunStore())
            continue
        queue_drive(run.id, now + delay if delay else None)
        queued += 1
        logger.info(
            "run %s: no driver after %s drive(s) (its lease ran out, its task was lost, or its "
            "wake_at passed), queued again in %s s",
            run.id,
            run.attempts,
            delay.total_seconds(),
        )
    return queued


def retry_delay(attempts: int) -> timedelta:
    """How long a run whose last ``attempts`` drives were cut off waits before the next: the
    first is driven again as soon as it is found (its lease running out was wait enough),
    the second after ``GATEHOUSE_RUN_RETRY_BACKOFF`` seconds, then twice that, and so on."""
    if attempts <= 1:
        return timedelta(0)
    return timedelta(seconds=settings.GATEHOUSE_RUN_RETRY_BACKOFF * 2 ** (attempts - 2))
