"""ASGI entry point, served in production by gunicorn with uvicorn workers
(``gunicorn editor.asgi:application -k editor.server.UvicornWorker``).

Django's own handler runs each request's synchronous code (the views, the middleware, the ORM)
on a thread of that request's, started for it and kept until the response is complete: for a
server-sent event stream, for as long as the stream is open, and with a database connection
per thread. :class:`Handler` runs the synchronous code of ordinary requests on a fixed pool of
``GATEHOUSE_WEB_THREADS`` threads per process instead, as a threaded gunicorn worker did: each
thread keeps its database connection from request to request (``CONN_MAX_AGE``), and with more
threads than ``GATEHOUSE_GRAPHVIZ_MAX_PROCESSES`` a burst of slow canvas layouts always leaves a
thread for everything else. A request that opens an event stream takes no thread of the pool:
its short synchronous part runs on asgiref's one shared thread, then it waits on the event loop
(``editor.streams``). Nor does ``/healthz``, on that same shared thread: a burst of views that
wait for a ``dot`` slot can take every thread of the pool for seconds, and the health check must
not queue behind them, or a proxy would take a working process for a dead one.
"""

import asyncio
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import django
from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")
django.setup(set_prefix=False)

from editor.apps import settle_start_up  # noqa: E402 - needs the settings loaded
from editor.streams.hub import shut_down  # noqa: E402 - needs the settings loaded

#: The run events API answers a stream when asked for one (``editor.api.runs``).
_RUN_EVENTS = re.compile(r"/v1/runs/[^/]+/events/?")


#: Answered without a thread of the pool (above).
_HEALTH_CHECK = "/healthz"


def opens_stream(scope: dict[str, Any]) -> bool:
    """Whether a request opens a server-sent event stream: the pages' ``/live/``, or a run's
    events asked for as a stream (``Accept: text/event-stream`` or ``from_seq``)."""
    path = scope.get("path", "")
    if path == "/live/":
        return True
    if not _RUN_EVENTS.fullmatch(path):
        return False
    accept = b"".join(value for name, value in scope.get("headers", ()) if name == b"accept")
    query = scope.get("query_string", b"")
    return b"text/event-stream" in accept or b"from_seq=" in query


class Handler(ASGIHandler):
    """Django's handler with a fixed pool of threads for synchronous code (above), and with
    the lifespan events of the ASGI server: on shutdown the streams' watcher lets its
    connection go."""

    def __init__(self) -> None:
        super().__init__()
        self._threads: asyncio.Queue[ThreadPoolExecutor] | None = None

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

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise ValueError(f"Gatehouse serves HTTP only, not {scope['type']}")
        try:
            if opens_stream(scope) or scope.get("path") == _HEALTH_CHECK:
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
