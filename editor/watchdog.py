"""The worker's watchdog (docs/engine.md, *The watchdog*).

The engine checks the run's wall time before every call, map item and fold pass, so a drive
normally ends itself. The watchdog, a thread beside each drive, is for a drive stuck where the
engine cannot check (a blocking call in the drive's own thread). Its deadline is the run's
remaining wall time, told by the engine when the drive starts, plus
``GATEHOUSE_RUN_WATCHDOG_GRACE``:

1. past it, the watchdog takes the run from the drive (the drive's store refuses every later
   append) and records ``RunFailed`` naming the wall time: the run has ended, whatever the
   drive does next;
2. a drive still stuck a further grace later is reported with its stack, and, in a
   long-running worker (``db_worker`` without ``--batch``), the worker process exits (status
   70) so that its supervisor starts a fresh one: a stuck drive cannot hold a worker forever;
3. a drive that holds Python's interpreter lock in C code (no other thread of the process can
   run then, the watchdog included) is stopped by :mod:`faulthandler`'s timer, which needs no
   lock: one more grace later it writes every thread's stack to standard error and exits the
   process. The run's lease then runs out and it counts one cut-off drive
   (``GATEHOUSE_RUN_MAX_ATTEMPTS``).
"""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable

from django.db import connection

__all__ = ["STUCK_EXIT_STATUS", "Watchdog", "report_stuck"]

logger = logging.getLogger("editor.tasks")

#: Set by ``db_worker`` when it runs as a long-lived worker: a stuck drive then ends the
#: process (its supervisor starts another). Off for ``--batch`` and in-process callers.
exit_when_stuck = False

#: The exit status of a worker that a stuck drive took down.
STUCK_EXIT_STATUS = 70


class Watchdog(threading.Thread):
    """Watches the drive of ``run_id`` from beside it; ``overrun()`` is called (on this
    thread) when the drive outlives its deadline."""

    def __init__(
        self,
        run_id: str,
        overrun: Callable[[], None],
        *,
        wall_time: float,
        grace: float,
        drive_thread: threading.Thread | None = None,
    ) -> None:
        super().__init__(name=f"watchdog-{run_id}", daemon=True)
        self.run_id = run_id
        self.overrun = overrun
        self.grace = grace
        self.drive_thread = drive_thread or threading.current_thread()
        self.fired = False
        self.stopped = threading.Event()
        # Until the engine says better: the whole wall time from now.
        self.deadline = time.monotonic() + wall_time + grace
        self._arm()

    def started(self, remaining: float) -> None:
        """The engine's word once the run is loaded: ``remaining`` seconds of wall time."""
        self.deadline = time.monotonic() + max(0.0, remaining) + self.grace
        self._arm()

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                left = self.deadline - time.monotonic()
                if left <= 0:
                    break
                # Wake at least every second: the engine may move the deadline meanwhile.
                if self.stopped.wait(min(left, 1.0)):
                    return
            if self.stopped.is_set():
                return
            self.fired = True
            try:
                self.overrun()
            except Exception:
                logger.exception("run %s: the watchdog could not fail the run", self.run_id)
            if not self.stopped.wait(self.grace):
                report_stuck(self.run_id, self.drive_thread)
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive() and self is not threading.current_thread():
            self.join()
        if exit_when_stuck:
            faulthandler.cancel_dump_traceback_later()

    def _arm(self) -> None:
        # The lock-free backstop, one grace after the watchdog would have ended the process.
        if exit_when_stuck:
            left = max(1.0, self.deadline - time.monotonic() + 2 * self.grace)
            # Without a console `sys.__stderr__` is None, and faulthandler writes to sys.stderr.
            faulthandler.dump_traceback_later(left, exit=True, file=sys.__stderr__ or sys.stderr)


def report_stuck(run_id: str, thread: threading.Thread) -> None:
    """Log a drive that does not stop, with where it is stuck; end a long-running worker."""
    frame = sys._current_frames().get(thread.ident or -1)
    stack = "".join(traceback.format_stack(frame)) if frame is not None else "(no stack)\n"
    if exit_when_stuck:
        logger.critical(
            "run %s: its drive is stuck and does not stop; the worker exits (status %s) so "
            "that a fresh one takes its place. The drive's stack:\n%s",
            run_id,
            STUCK_EXIT_STATUS,
            stack,
        )
        logging.shutdown()
        os._exit(STUCK_EXIT_STATUS)
    logger.error("run %s: its drive is stuck and does not stop. Its stack:\n%s", run_id, stack)
