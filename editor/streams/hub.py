"""The one place in a web process that watches the database for streams: the hub.

Streams (``editor.streams.feeds``) wait on the event loop, holding no thread and no database
connection; the hub wakes the ones whose run's log grew, and keeps, for each person with a page
open, the count of cards they may decide now (**Mine**) for the navigation bar: after a burst
of appends, one count a person, whatever the number of their pages.

* On PostgreSQL it holds one connection that ``LISTEN``\\ s on the channel every append
  announces itself on when it commits (``editor.channel``): a stream wakes as soon as
  the commit is done, and an idle stream costs no query at all. When that connection cannot
  be had (the database restarting), the hub polls until it can.
* On SQLite it polls: every ``GATEHOUSE_STREAM_POLL_MS`` one query reads the event counts of
  every run some stream watches, whatever their number.

There is one hub per event loop (a uvicorn worker has one); it starts with its first stream
and stops a while after its last. The streams' reads run on the hub's few threads
(:data:`THREADS`), each with its own connection, never on the thread of the sync views.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from django.conf import settings
from django.db import DatabaseError, connections

from editor.channel import CHANNEL, parse_announcement
from editor.services.inbox.queue import mine_count_of
from editor.services.runs import live

__all__ = ["Hub", "Waiter", "hub", "in_thread", "shut_down"]

logger = logging.getLogger(__name__)

#: Seconds without a stream before the hub stops (and lets its connection go).
IDLE_SECONDS = 10.0
#: How long notifications are gathered before the waiting count is read again: a burst of
#: appends costs one ``COUNT``.
RECOUNT_SECONDS = 0.25
#: After the listening connection failed, how long to poll before trying it again.
RELISTEN_SECONDS = 2.0


#: Threads of a hub for its streams' database reads (each keeps its own connection).
THREADS = 4


async def in_thread[T](func: Callable[..., T], *args: Any) -> T:
    """Run ``func(*args)`` on the hub's threads (never the thread of the sync views).

    A connection that failed is closed there, so the next call on that thread opens a new one
    (the database may have restarted)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(hub().threads, functools.partial(_guarded, func, args))


def _guarded[T](func: Callable[..., T], args: tuple[Any, ...]) -> T:
    try:
        return func(*args)
    except DatabaseError:
        for connection in connections.all(initialized_only=True):
            connection.close()
        raise


class Waiter:
    """One stream's interest: a run (``seen``: the events it has had) and/or the count of
    cards its ``person`` may decide (``count_seen``). :meth:`wait` returns when the hub has
    news for it."""

    __slots__ = ("_event", "count_seen", "person", "seen")

    def __init__(self, seen: int = 0, count_seen: int | None = None, person: Any = None) -> None:
        self.seen = seen
        self.count_seen = count_seen
        self.person = person
        self._event = asyncio.Event()

    def wake(self) -> None:
        self._event.set()

    async def wait(self, timeout: float) -> bool:
        """``True`` when woken, ``False`` after ``timeout`` seconds without news."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
            woken = True
        except TimeoutError:
            woken = False
        self._event.clear()
        return woken


class Hub:
    """Wakes the streams of one event loop (module docstring)."""

    def __init__(self) -> None:
        self.threads = ThreadPoolExecutor(THREADS, thread_name_prefix="stream-reads")
        self.runs: dict[str, set[Waiter]] = {}
        self.counting: set[Waiter] = set()
        #: Each person's count of the cards they may decide, as last read (absent: not yet).
        self.waiting_counts: dict[Any, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._idle_since = time.monotonic()
        self._recount = True

    # --- streams register here ------------------------------------------------------

    def watch(self, waiter: Waiter, run_id: str | None = None, *, count: bool = False) -> None:
        if run_id is not None:
            self.runs.setdefault(run_id, set()).add(waiter)
        if count:
            self.counting.add(waiter)
            self._recount = True
        if self._task is None or self._task.done():
            # In a context of its own: not the first stream's, which ends before the hub does.
            self._task = asyncio.get_running_loop().create_task(
                self._serve(), name="stream-hub", context=contextvars.Context()
            )

    def forget(self, waiter: Waiter, run_id: str | None = None) -> None:
        if run_id is not None and run_id in self.runs:
            self.runs[run_id].discard(waiter)
            if not self.runs[run_id]:
                del self.runs[run_id]
        self.counting.discard(waiter)
        if not self.runs and not self.counting:
            self._idle_since = time.monotonic()

    # --- waking ---------------------------------------------------------------------

    def _appended(self, run_id: str, count: int) -> None:
        for waiter in self.runs.get(run_id, ()):
            if count > waiter.seen:
                waiter.wake()

    def _wake_all(self) -> None:
        for waiters in self.runs.values():
            for waiter in waiters:
                waiter.wake()
        self._recount = True

    def count_of(self, waiter: Waiter) -> int | None:
        """The count of ``waiter``'s person, as last read (``None``: not read yet)."""
        return self.waiting_counts.get(waiter.person)

    async def _count_waiting(self) -> None:
        self._recount = False
        people = {waiter.person for waiter in self.counting}
        counts = await in_thread(_counts, people)
        self.waiting_counts = counts
        for waiter in self.counting:
            if waiter.count_seen != counts.get(waiter.person):
                waiter.wake()

    # --- the background task --------------------------------------------------------

    def _idle(self) -> bool:
        return (
            not self.runs
            and not self.counting
            and time.monotonic() - self._idle_since > IDLE_SECONDS
        )

    async def _serve(self) -> None:
        postgres = "postgresql" in settings.DATABASES["default"]["ENGINE"]
        while not self._idle():
            try:
                if postgres:
                    await self._listen()
                    continue
            except (OSError, psycopg.Error) as error:
                logger.warning("streams: cannot listen for appends (%s); polling meanwhile", error)
                self._wake_all()
            deadline = time.monotonic() + (RELISTEN_SECONDS if postgres else float("inf"))
            while not self._idle() and time.monotonic() < deadline:
                await self._poll()
                await asyncio.sleep(settings.GATEHOUSE_STREAM_POLL_MS / 1000)

    async def _poll(self) -> None:
        try:
            if self.runs:
                counts = await in_thread(live.event_counts, list(self.runs))
                for run_id, count in counts.items():
                    self._appended(run_id, count)
            if self.counting:
                await self._count_waiting()
        except DatabaseError as error:
            logger.warning("streams: cannot read the runs (%s); trying again", error)

    async def _listen(self) -> None:
        async with await psycopg.AsyncConnection.connect(
            **_listen_parameters(), autocommit=True
        ) as connection:
            await connection.execute(f"LISTEN {CHANNEL}")
            # Whatever committed before the LISTEN took effect: every stream looks once.
            self._wake_all()
            while not self._idle():
                async for note in connection.notifies(timeout=RECOUNT_SECONDS):
                    announced = parse_announcement(note.payload)
                    if announced is not None:
                        self._appended(*announced)
                    self._recount = True
                if self._recount and self.counting:
                    try:
                        await self._count_waiting()
                    except DatabaseError as error:
                        logger.warning("streams: cannot count the waiting runs (%s)", error)
                        self._recount = True


def _counts(people: set[Any]) -> dict[Any, int]:
    """Each person's count of the cards they may decide now: one count a person."""
    return {person: mine_count_of(person) if person is not None else 0 for person in people}


def _listen_parameters() -> dict[str, Any]:
    """libpq connection parameters of the default database, for the listening connection."""
    database = settings.DATABASES["default"]
    parameters: dict[str, Any] = {
        "dbname": database["NAME"],
        "user": database.get("USER") or None,
        "password": database.get("PASSWORD") or None,
        "host": database.get("HOST") or None,
        "port": database.get("PORT") or None,
        "application_name": "gatehouse-streams",
    }
    for key, value in (database.get("OPTIONS") or {}).items():
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            parameters[key] = value
    return {key: value for key, value in parameters.items() if value is not None}


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """The hub of the running event loop."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub()
    return found


async def shut_down() -> None:
    """Stop the running loop's hub (the server is shutting down): its listening connection and
    the connections of its threads are closed."""
    loop = asyncio.get_running_loop()
    found = _hubs.pop(loop, None)
    if found is None:
        return
    if found._task is not None:
        found._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await found._task
    # One call per thread, held at a barrier so that each thread takes exactly one.
    barrier = threading.Barrier(THREADS)

    def close_connections() -> None:
        connections.close_all()
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=5)

    await asyncio.gather(
        *(loop.run_in_executor(found.threads, close_connections) for _ in range(THREADS))
    )
    found.threads.shutdown(wait=False)
