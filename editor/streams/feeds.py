"""The server-sent event streams: a run's events (``GET /v1/runs/{id}/events``) and the
updates a page listens for (``GET /live/``).

Each stream is a *feed* (what to send next, read from the database in one short step) and a
*driver* that repeats the step:

* :func:`serve_async` under ASGI: between steps the stream waits on the event loop for the
  hub (``editor.streams.hub``) to say there is news, so a waiting stream holds no thread;
* :func:`serve_sync` under WSGI (the test server, ``runserver``): it polls and sleeps in its
  request's thread, and sends a comment every second so a closed connection is noticed.

:func:`streaming_response` picks the driver from the request it answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import DatabaseError
from django.http import HttpRequest, StreamingHttpResponse

from editor.services import live
from editor.services.errors import UnknownRun
from editor.streams.hub import Waiter, hub, in_thread

__all__ = ["PageUpdates", "RunEvents", "streaming_response"]

logger = logging.getLogger(__name__)

KEEPALIVE = b": keep-alive\n\n"
#: Under WSGI a stream writes at least this often, to notice a client that went away.
SYNC_KEEPALIVE_SECONDS = 1.0
#: After telling a page its run moved on, wait this long before telling it again: a burst of
#: events costs the page one refresh, and the last one is never lost.
PAGE_COALESCE_SECONDS = 0.3
#: After a failed database read, wait this long before the next.
RETRY_SECONDS = 1.0


def frame(data: bytes | str, *, event: str | None = None, event_id: int | None = None) -> bytes:
    """One server-sent event. ``data`` has no line breaks (compact JSON, a number)."""
    head = b""
    if event_id is not None:
        head += b"id: %d\n" % event_id
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    body = data.encode() if isinstance(data, str) else data
    return head + b"data: " + body + b"\n\n"


class RunEvents:
    """A run's envelopes from ``start`` on, one frame each (``id: <seq>``), then ``event:
    end`` with the run's status once it rests (spec 05)."""

    def __init__(self, run_id: str, start: int) -> None:
        self.run_id = run_id
        self.cursor = start
        self.done = False
        #: The last step stopped at a full slice: read on without waiting.
        self.more = False

    @property
    def run(self) -> str:
        return self.run_id

    @property
    def seen(self) -> int:
        return self.cursor

    def step(self, waiting_count: int | None = None) -> list[bytes]:
        del waiting_count  # a run's stream does not carry the count
        found = live.run_slice(self.run_id, self.cursor)
        frames = [frame(orjson.dumps(envelope), event_id=seq) for seq, envelope in found.events]
        if found.events:
            self.cursor = found.events[-1][0] + 1
        self.more = self.cursor < found.event_count
        if not self.more and found.resting:
            frames.append(frame(orjson.dumps({"status": found.status}), event="end"))
            self.done = True
        return frames


class PageUpdates:
    """What a signed-in page listens for: ``event: count`` (the runs waiting for a person,
    whenever the number changes) and, on a run's page, ``event: run`` (its log grew; the data
    is its event count) until the run has ended. The stream itself never ends."""

    def __init__(self, run_id: str | None, seen: int) -> None:
        self.run_id = run_id
        self.cursor = seen
        self.count_seen: int | None = None
        self.done = False
        self.more = False
        self.run_over = run_id is None

    @property
    def run(self) -> str | None:
        return self.run_id

    @property
    def seen(self) -> int:
        return self.cursor

    def step(self, waiting_count: int | None = None) -> list[bytes]:
        frames = []
        if not self.run_over and self.run_id is not None:
            try:
                count, state = live.run_state(self.run_id)
            except UnknownRun:
                self.run_over = True
            else:
                if count > self.cursor:
                    frames.append(frame(str(count), event="run"))
                    self.cursor = count
                self.run_over = state in live.TERMINAL_STATES
        count = waiting_count if waiting_count is not None else live.parked_count()
        if count != self.count_seen:
            frames.append(frame(str(count), event="count"))
            self.count_seen = count
        return frames


Feed = RunEvents | PageUpdates


async def serve_async(feed: Feed) -> AsyncIterator[bytes]:
    """Drive ``feed`` on the event loop, waiting for the hub between steps."""
    streams = hub()
    counting = isinstance(feed, PageUpdates)
    waiter = Waiter(feed.seen)
    watched = None if isinstance(feed, PageUpdates) and feed.run_over else feed.run
    streams.watch(waiter, watched, count=counting)
    keepalive = settings.GATEHOUSE_STREAM_KEEPALIVE_SECONDS
    written = time.monotonic()
    try:
        while True:
            try:
                frames = await in_thread(feed.step, streams.waiting_count if counting else None)
            except UnknownRun:
                return
            except DatabaseError:
                await asyncio.sleep(RETRY_SECONDS)
                frames = []
            except Exception:
                logger.exception("stream of %s ended by an unexpected error", feed.run or "a page")
                return
            if frames:
                yield b"".join(frames)
                written = time.monotonic()
            if feed.done:
                return
            if feed.more:
                continue
            if isinstance(feed, PageUpdates):
                if watched is not None and feed.run_over:
                    streams.forget(waiter, watched)
                    watched = None
                waiter.count_seen = feed.count_seen
                if any(part.startswith(b"event: run") for part in frames):
                    await asyncio.sleep(PAGE_COALESCE_SECONDS)
            waiter.seen = feed.seen
            left = keepalive - (time.monotonic() - written)
            woken = left > 0 and await waiter.wait(left)
            if not woken and time.monotonic() - written >= keepalive:
                yield KEEPALIVE
                written = time.monotonic()
    finally:
        streams.forget(waiter, watched)


def serve_sync(feed: Feed) -> Iterator[bytes]:
    """Drive ``feed`` in the calling thread, polling (the WSGI servers)."""
    poll = settings.GATEHOUSE_STREAM_POLL_MS / 1000
    written = time.monotonic()
    while True:
        try:
            frames = feed.step()
        except UnknownRun:
            return
        except DatabaseError:
            frames = []
            time.sleep(RETRY_SECONDS)
        except Exception:
            # The stream ends; its client reconnects. A development server must not die of it.
            logger.exception("stream of %s ended by an unexpected error", feed.run or "a page")
            return
        if frames:
            yield b"".join(frames)
            written = time.monotonic()
        if feed.done:
            return
        if feed.more:
            continue
        time.sleep(poll)
        if time.monotonic() - written >= SYNC_KEEPALIVE_SECONDS:
            yield KEEPALIVE
            written = time.monotonic()


def streaming_response(request: HttpRequest, feed: Feed) -> StreamingHttpResponse:
    """``feed`` as ``text/event-stream``: waited for on the event loop under ASGI, polled in
    the request's thread under WSGI."""
    content: Any = serve_async(feed) if isinstance(request, ASGIRequest) else serve_sync(feed)
    response = StreamingHttpResponse(content, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    # Proxies (nginx) must pass each frame on as it comes, not buffer the response.
    response["X-Accel-Buffering"] = "no"
    return response
