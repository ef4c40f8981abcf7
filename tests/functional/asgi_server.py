"""The production ASGI application (``editor.asgi.Handler``) under uvicorn, in a thread of the
test process, for the browser tests that need what only a real ASGI server does: connections
kept alive from one request to the next, streams waiting on the event loop.

The live server the other browser tests use is WSGI (each request a thread of its own), so
what happens between two requests of one kept-alive ASGI connection is never seen there.
Static files are answered here from the finders, without a thread, so that every request
that reaches Django is one the application itself serves.
"""

from __future__ import annotations

import mimetypes
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from django.contrib.staticfiles import finders

from editor.asgi import Handler

__all__ = ["serving_asgi"]

STATIC = "/static/"


def _static(application: Any) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(STATIC):
            await application(scope, receive, send)
            return
        found = finders.find(scope["path"].removeprefix(STATIC))
        if not found:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = Path(found).read_bytes()
        kind = mimetypes.guess_type(found)[0] or "application/octet-stream"
        headers = [(b"content-type", kind.encode()), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving_asgi() -> Iterator[str]:
    """uvicorn serving a fresh :class:`editor.asgi.Handler` until the block ends; its URL."""
    port = _free_port()
    config = uvicorn.Config(
        _static(Handler()),
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_level="warning",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        assert time.monotonic() < deadline, "uvicorn did not start within 30 s"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
