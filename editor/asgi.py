"""ASGI entry point, served in production by gunicorn with uvicorn workers
(``gunicorn editor.asgi:application -k editor.server.UvicornWorker``).

Django's own handler runs each request's synchronous code (the views, the middleware, the ORM)
on a thread of that request's, started for it and kept until the response is complete: for a
server-sent event stream, for as long as the stream is open, and with a database connection
per thread. :class:`Handler` runs the synchronous code of ordinary requests on a fixed pool of
``GATEHOUSE_WEB_THREADS`` threads per process instead, as a threaded gunicorn worker did: each
thread keeps its database connection from request to request (``CONN_MAX_AGE``), and with more
threads than ``GATEHOUSE_GRAPHVIZ_MAX_PROCESSES`` a burst of slow canvas layouts always leaves a
thread for everything else.

A request that opens an event stream takes no thread of the pool: its short synchronous part
(the middleware, the view) runs on one of :data:`STREAM_SETUP_THREADS` threads of its own,
shared by every stream, then it waits on the event loop (``editor.streams``). ``/healthz`` takes
no thread at all (``editor.views.health``): neither a burst of views that wait for a ``dot``
slot nor thousands of streams opening at once can make the health check queue, or a proxy
would take a working process for a dead one.

Every request runs in a thread-sensitive context of its own (asgiref's
``ThreadSensitiveContext``), entered here: a kept-alive connection's next request is started
from inside the previous one's task and inherits its context, already closed, and a
synchronous call made in it would fail (``RuntimeError: ThreadSensitiveContext has exited``).

A request body is read as it arrives, counted against its route's cap (``editor.body_limits``):
past the cap nothing more is read, the request reaches the middleware marked as refused, which
answers ``413``, and the connection is closed. Django's own ``read_body`` would first spool the
whole body, whatever its size, to a temporary file. Every error answer the handler sends carries
the security headers of a page (``editor.page_headers``), the ones it writes itself included.
"""

import asyncio
import io
import itertools
import os
import re
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

import django
from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponseBase

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")
django.setup(set_prefix=False)

from editor.apps import settle_start_up  # noqa: E402 - needs the settings loaded
from editor.body_limits import REFUSED, cap_for, declared_length  # noqa: E402 - likewise
from editor.page_headers import add_page_headers  # noqa: E402 - likewise
from editor.streams.hub import shut_down  # noqa: E402 - needs the settings loaded
from editor.views.health import answer_health_check  # noqa: E402 - needs the settings loaded

#: The run events API answers a stream when asked for one (``editor.api.runs``).
_RUN_EVENTS = re.compile(r"/v1/runs/[^/]+/events/?")


#: Answered without any thread (above).
_HEALTH_CHECK = "/healthz"

#: Threads for the synchronous part of opening a stream, shared by every stream of a process.
STREAM_SETUP_THREADS = 2


def opens_stream(scope: dict[str, Any]) -> bool:
    """Whether a request opens a server-sent event stream: the pages' ``/live/``, or a run's
    events asked for as a stream (``Accept: text/event-stream`` or ``from_seq``)."""
    path = scope.get("path", "")
    if path == "/live/":
        return True
    if not _RUN_EVENTS.fullmatch(path):
        return False
    accept = b"".join(value for name, value in scope.get("headers", ()) if name == b"accept")
    if b"text/event-stream" in accept:
        return True
    # As the view reads it: a ``from_seq`` parameter with a value, not a text that merely
    # contains "from_seq=" (``?q=from_seq=1`` is a JSON page).
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return any(value.strip() for value in query.get("from_seq", ()))


def _without_body(scope: dict[str, Any]) -> bool:
    """Whether a request is a ``GET`` or ``HEAD`` that declares no body: the health check
    answers those without a thread; anything else goes the way of every request, its body
    capped as it arrives (``413`` past ``/healthz``'s small cap)."""
    if scope.get("method") not in ("GET", "HEAD"):
        return False
    headers = scope.get("headers", ())
    return declared_length(headers) == 0 and not any(
        name == b"transfer-encoding" for name, _ in headers
    )


class Handler(ASGIHandler):
    """Django's handler with a fixed pool of threads for synchronous code (above), and with
    the lifespan events of the ASGI server: on shutdown the streams' watcher lets its
    connection go."""

    def __init__(self) -> None:
        super().__init__()
        self._threads: asyncio.Queue[ThreadPoolExecutor] | None = None
        self._stream_threads: Iterator[ThreadPoolExecutor] | None = None

    def _pool(self) -> asyncio.Queue[ThreadPoolExecutor]:
        # Created on the first request, inside the server's event loop.
        if self._threads is None:
            threads: asyncio.Queue[ThreadPoolExecutor] = asyncio.Queue()
            for number in range(settings.GATEHOUSE_WEB_THREADS):
                threads.put_nowait(
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"web-{number}")
                )
            self._threads = threads
        return self._threads

    def _stream_thread(self) -> ThreadPoolExecutor:
        # Streams take turns: a stream's synchronous calls stay on one thread (each its own
        # context), and a few threads serve every stream's short set-up.
        if self._stream_threads is None:
            self._stream_threads = itertools.cycle(
                [
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"stream-setup-{number}")
                    for number in range(STREAM_SETUP_THREADS)
                ]
            )
        return next(self._stream_threads)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise ValueError(f"Gatehouse serves HTTP only, not {scope['type']}")
        if scope.get("path") == _HEALTH_CHECK and _without_body(scope):
            await answer_health_check(scope, send)
            return
        try:
            if opens_stream(scope):
                async with ThreadSensitiveContext(executor=self._stream_thread()):
                    await self.handle(scope, receive, send)
                return
            threads = self._pool()
            thread = await threads.get()
            try:
                async with ThreadSensitiveContext(executor=thread):
                    await self.handle(scope, receive, send)
            finally:
                threads.put_nowait(thread)
        except asyncio.CancelledError:
            # The server is stopping and ends the streams still open after its grace period
            # (editor.server); their clients reconnect. Not a failure of the request.
            return

    # --- Request bodies, capped as they arrive; the headers of error answers ----------------

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = _CappedBody(scope, receive)
        await super().handle(scope, body, _closing_if_refused(body, send))

    async def read_body(self, receive: Any) -> Any:
        if isinstance(receive, _CappedBody):
            return await receive.read()
        return await super().read_body(receive)

    def create_request(self, scope: Mapping[str, Any], body_file: Any) -> Any:
        request, error_response = super().create_request(scope, body_file)
        if error_response is not None:
            add_page_headers(error_response)
        return request, error_response

    async def send_response(self, response: HttpResponseBase, send: Any) -> None:
        if response.status_code >= 400:
            add_page_headers(response)
        await super().send_response(response, send)


class _CappedBody:
    """A request's ``receive``, read into memory up to its route's cap and no further."""

    def __init__(self, scope: dict[str, Any], receive: Any) -> None:
        self._scope = scope
        self._receive = receive
        self.cap = cap_for(scope.get("method") or "GET", scope.get("path") or "")
        self.refused = False

    async def read(self) -> io.BytesIO:
        if declared_length(self._scope.get("headers", ())) > self.cap:
            # Refused by its Content-Length: not one byte of it is read.
            return self._refuse()
        body = io.BytesIO()
        total = 0
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise RequestAborted()
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.cap:
                body.close()
                return self._refuse()
            body.write(chunk)
            if not message.get("more_body", False):
                break
        body.seek(0)
        return body

    def _refuse(self) -> io.BytesIO:
        self.refused = True
        self._scope[REFUSED] = self.cap
        return io.BytesIO()

    async def __call__(self) -> dict[str, Any]:
        if self.refused:
            # Django listens for the client leaving while the response is made; the rest of a
            # refused body must not be read for it (nor taken for a second request). The
            # response follows at once, and Django then cancels this wait.
            await asyncio.Event().wait()
        message: dict[str, Any] = await self._receive()
        return message


def _closing_if_refused(body: _CappedBody, send: Any) -> Any:
    """``send``, closing the connection after the answer to a refused body: its unread rest
    would otherwise be taken for the next request."""

    async def sending(message: dict[str, Any]) -> None:
        if body.refused and message["type"] == "http.response.start":
            headers = [
                pair for pair in message.get("headers", ()) if pair[0].lower() != b"connection"
            ]
            message = {**message, "headers": [*headers, (b"Connection", b"close")]}
        await send(message)

    return sending


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shut_down()
            await send({"type": "lifespan.shutdown.complete"})
            return


application = Handler()
settle_start_up()
