"""ASGI entry point, served in production by gunicorn with uvicorn workers
(``gunicorn editor.asgi:application -k editor.server.UvicornWorker``).

Django's own handler runs each request's synchronous code (the views, the middleware, the ORM)
on a thread of that request's, kept until the response is complete: for a server-sent event
stream, for as long as the stream is open. :class:`Handler` runs the synchronous code of every
request on the process's one thread for it instead (asgiref's single thread), one request at a
time, as a synchronous gunicorn worker did; a stream waits on the event loop and holds no thread
at all (``editor.streams``). The process's database connection lives on that thread and is
reused from request to request (``CONN_MAX_AGE``).
"""

import asyncio
import os
from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")
django.setup(set_prefix=False)

from editor.streams.hub import shut_down  # noqa: E402 - needs the settings loaded


class Handler(ASGIHandler):
    """Django's handler without a thread per request (above), and with the lifespan events
    of the ASGI server: on shutdown the streams' watcher lets its connection go."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise ValueError(f"Gatehouse serves HTTP only, not {scope['type']}")
        try:
            await self.handle(scope, receive, send)
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
