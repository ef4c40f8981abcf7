"""The server-sent event streams: a run's events (``GET /v1/runs/{id}/events``) and the
updates a page listens for (``GET /live/``).

Each stream is a *feed* (what to send next, read from the database in one short step) and a
*driver* that repeats the step:

* :func:`serve_async` under ASGI: between steps the stream waits on the event loop for the
  hub (``editor.streams.hub``) to say there is news, so a waiting stream holds no thread;
* :func:`serve_sync` under WSGI (the test server, ``runserver``): it polls and sleeps in its
  request's thread, and sends a comment every second so a closed connection is noticed.

:func:`streaming_response` picks the driver from the request it answers, takes one of the
caller's stream slots (``editor.streams.limits``: ``429`` when none is left) and gives the
driver the caller's credentials, which it checks again every
``GATEHOUSE_STREAM_RECHECK_SECONDS``: a revoked token, a signed-out session or a deactivated
user ends the stream (``event: end``, ``{"reason": "credentials_revoked"}``).

A stream costs a bounded buffer, however slowly its client reads: each step reads one slice of
at most ``editor.services.runs.live.SLICE_BYTES``, and each frame is handed to the server on its
own, which (under ASGI) waits while the connection's send buffer is full; meanwhile the
stream reads nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any

import orjson
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse

from editor.api.errors import error_response
from editor.services.errors import UnknownRun
from editor.services.inbox.queue import mine_count_of
from editor.services.runs import live
from editor.streams.hub import Waiter, hub, in_thread
from editor.streams.limits import RETRY_AFTER_SECONDS, TooManyStreams, claim

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
#: The last frame of a stream whose caller is no longer let in.
CREDENTIALS_REVOKED = b'event: end\ndata: {"reason":"credentials_revoked"}\n\n'


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
        frames = [frame(envelope, event_id=seq) for seq, envelope in found.events]
        # Past the events read, or past a gap (events pruned) up to the run's count: a stream
        # never asks twice for what is not stored.
        self.cursor = found.next_start
        self.more = self.cursor < found.event_count
        if not self.more and found.resting:
            frames.append(frame(orjson.dumps({"status": found.status}), event="end"))
            self.done = True
        return frames


class PageUpdates:
    """What a signed-in page listens for: ``event: count`` (the cards its person may decide
    now, **Mine**, whenever the number changes) and, on a run's page, ``event: run`` (its log
    grew; the data is its event count) until the run has ended. The stream itself never
    ends."""

    def __init__(self, run_id: str | None, seen: int, person: Any = None) -> None:
        #: The id of the user whose page it is (their count is the page's).
        self.person = person
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
        count = waiting_count if waiting_count is not None else mine_count_of(self.person)
        if count != self.count_seen:
            frames.append(frame(str(count), event="count"))
            self.count_seen = count
        return frames


Feed = RunEvents | PageUpdates


class _Recheck:
    """When a stream next checks its caller's credentials (``None``: never; tests' feeds)."""

    def __init__(self, credentials: live.Credentials | None) -> None:
        self.credentials = credentials
        self.every = float(settings.GATEHOUSE_STREAM_RECHECK_SECONDS)
        self.checked = time.monotonic()

    def due(self) -> bool:
        return self.credentials is not None and time.monotonic() - self.checked >= self.every

    def left(self) -> float:
        if self.credentials is None:
            return float("inf")
        return self.every - (time.monotonic() - self.checked)

    def still_valid(self) -> bool:
        """Checks now. A database that cannot answer lets the stream go on (checked later)."""
        self.checked = time.monotonic()
        assert self.credentials is not None
        try:
            return self.credentials.still_valid()
        except DatabaseError:
            return True


async def serve_async(
    feed: Feed, credentials: live.Credentials | None = None
) -> AsyncGenerator[bytes]:
    """Drive ``feed`` on the event loop, waiting for the hub between steps."""
    streams = hub()
    counting = isinstance(feed, PageUpdates)
    waiter = Waiter(feed.seen, person=feed.person if isinstance(feed, PageUpdates) else None)
    watched = None if isinstance(feed, PageUpdates) and feed.run_over else feed.run
    streams.watch(waiter, watched, count=counting)
    keepalive = settings.GATEHOUSE_STREAM_KEEPALIVE_SECONDS
    recheck = _Recheck(credentials)
    written = time.monotonic()
    try:
        while True:
            if recheck.due() and not await in_thread(recheck.still_valid):
                yield CREDENTIALS_REVOKED
                return
            try:
                count = streams.count_of(waiter) if counting else None
                frames = await in_thread(feed.step, count)
            except UnknownRun:
                return
            except DatabaseError:
                await asyncio.sleep(RETRY_SECONDS)
                frames = []
            except Exception:
                logger.exception("stream of %s ended by an unexpected error", feed.run or "a page")
                return
            # One frame at a time: the server holds each until the connection takes it.
            for part in frames:
                yield part
            if frames:
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
            left = min(keepalive - (time.monotonic() - written), recheck.left())
            woken = left > 0 and await waiter.wait(left)
            if not woken and time.monotonic() - written >= keepalive:
                yield KEEPALIVE
                written = time.monotonic()
    finally:
        streams.forget(waiter, watched)


def serve_sync(feed: Feed, credentials: live.Credentials | None = None) -> Generator[bytes]:
    """Drive ``feed`` in the calling thread, polling (the WSGI servers)."""
    poll = settings.GATEHOUSE_STREAM_POLL_MS / 1000
    recheck = _Recheck(credentials)
    written = time.monotonic()
    while True:
        if recheck.due() and not recheck.still_valid():
            yield CREDENTIALS_REVOKED
            return
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
        yield from frames
        if frames:
            written = time.monotonic()
        if feed.done:
            return
        if feed.more:
            continue
        time.sleep(poll)
        if time.monotonic() - written >= SYNC_KEEPALIVE_SECONDS:
            yield KEEPALIVE
            written = time.monotonic()


class EventStreamResponse(StreamingHttpResponse):
    """``text/event-stream`` that gives its stream slot back when closed."""

    def __init__(self, content: Any, release: Any) -> None:
        super().__init__(content, content_type="text/event-stream")
        self._release = release
        self["Cache-Control"] = "no-cache"
        # Proxies (nginx) must pass each frame on as it comes, not buffer the response.
        self["X-Accel-Buffering"] = "no"

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._release()


def _caller(request: HttpRequest) -> tuple[int | None, live.Credentials | None]:
    """Who opens the stream, and what let them in: the API's caller (``request.auth``, by
    token or session) or the page's signed-in user."""
    user = getattr(request, "auth", None) or getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None, None
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" and token.strip() else None
    session_user = getattr(request, "user", None)
    session_key = None
    if session_user is not None and session_user.is_authenticated:
        session_key = request.session.session_key
    return user.pk, live.Credentials.of(user.pk, bearer, session_key)


def _too_many(request: HttpRequest, refused: TooManyStreams) -> HttpResponse:
    if request.path.startswith("/v1/"):
        response: HttpResponse = error_response(
            429, "too_many_streams", refused.message, {"per": refused.per, "limit": refused.limit}
        )
    else:
        response = HttpResponse(
            refused.message + "\n", status=429, content_type="text/plain; charset=utf-8"
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def streaming_response(request: HttpRequest, feed: Feed) -> HttpResponseBase:
    """``feed`` as ``text/event-stream``: waited for on the event loop under ASGI, polled in
    the request's thread under WSGI; ``429`` when the caller or the process has every stream
    it may have open (``/v1``: the error envelope, ``too_many_streams``)."""
    user_id, credentials = _caller(request)
    try:
        release = claim(user_id if user_id is not None else -1)
    except TooManyStreams as refused:
        return _too_many(request, refused)
    content: Any = (
        _released(serve_async(feed, credentials), release)
        if isinstance(request, ASGIRequest)
        else _released_sync(serve_sync(feed, credentials), release)
    )
    return EventStreamResponse(content, release)


async def _released(frames: AsyncGenerator[bytes], release: Any) -> AsyncIterator[bytes]:
    # The slot goes back when the stream ends, even if its response is never closed (the
    # server cancelled it on shutdown); ``release`` runs once.
    try:
        async with contextlib.aclosing(frames):
            async for part in frames:
                yield part
    finally:
        release()


def _released_sync(frames: Generator[bytes], release: Any) -> Iterator[bytes]:
    try:
        with contextlib.closing(frames):
            yield from frames
    finally:
        release()
