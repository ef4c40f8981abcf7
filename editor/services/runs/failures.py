"""Ending runs whose drive could not end them (spec 04 *Durability*; docs/engine.md *Runs always
end*): a drive that raised an unexpected error, drives cut off too many times, and a drive the
worker's watchdog stopped past the run's wall time. Each is recorded as ``RunFailed`` with a
message a person can read and a ``code``; the details go to the worker's log."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from editor.engine import prepare_failure
from editor.engine.errors import RunLost, TransitionRefused
from editor.store import OrmRunStore

__all__ = [
    "CRASHED",
    "CUT_OFF",
    "OVERRAN",
    "crash_message",
    "cut_off_message",
    "fail_run",
    "overrun_message",
]

logger = logging.getLogger("editor.tasks")

CRASHED = "internal_error"
CUT_OFF = "drive_cut_off"
OVERRAN = "limit_exceeded"

#: How often a failure is prepared again when another append came first.
_ATTEMPTS = 5


def crash_message(error: BaseException) -> str:
    return (
        f"the worker stopped driving this run on an unexpected error "
        f"({type(error).__name__}); the worker's log has the details"
    )


def cut_off_message(attempts: int, last_error: str = "") -> str:
    cause = (
        f"the last one stopped on {last_error}"
        if last_error
        else "each time its worker stopped, or lost its lease, before the run parked or ended"
    )
    return (
        f"the run's drive was cut off {attempts} time{'' if attempts == 1 else 's'} ({cause}); "
        f"it is not driven again "
        f"(GATEHOUSE_RUN_MAX_ATTEMPTS)"
    )


def overrun_message() -> str:
    return (
        f"the run has been running for more than {settings.GATEHOUSE_RUN_WALL_TIME} s "
        f"(GATEHOUSE_RUN_WALL_TIME) and its drive did not stop: the worker's watchdog ended it "
        f"{settings.GATEHOUSE_RUN_WATCHDOG_GRACE} s later (GATEHOUSE_RUN_WATCHDOG_GRACE)"
    )


def fail_run(run_id: str, error: str, code: str, store: OrmRunStore) -> bool:
    """Record ``RunFailed`` for a run that waits for a driver (queued or running), through
    ``store`` (a lease holder's append when it has an owner). ``False`` when the run parked or
    ended first, or kept moving on under it."""
    for _attempt in range(_ATTEMPTS):
        record = store.load_run(run_id)
        try:
            events, status = prepare_failure(record, error, code, timezone.now())
        except TransitionRefused:
            return False  # it parked or ended meanwhile: nothing to fail
        try:
            if store.owner:
                store.append(run_id, events, status)
            else:
                store.record(run_id, events, status)
        except RunLost as lost:
            logger.info("run %s: recording its failure lost a race (%s)", run_id, lost)
            continue
        except TransitionRefused:
            return False
        logger.warning("run %s: failed: %s", run_id, error)
        return True
    return False
