"""A run's log as JSON lines, streamed (the run page's **Download log**): each event exactly as
``GET /v1/runs/{id}/events`` serves it, one per line, read a slice at a time
(:func:`editor.services.runs.log_reads.log_chunk`: at most 500 events and 256 KiB of payload, or one
event), so a log of any length costs one slice of memory. Under ASGI the reads run on the
loop's thread pool between writes, and the next slice is read only once the last was sent:
Django's handler awaits the server's ``send`` for each part, which a slow reader holds back,
so such a reader costs one slice and the server's write buffer. Under WSGI, in the request's
thread."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

from editor.services.runs.log_reads import log_chunk
from editor.streams.hub import in_thread

__all__ = ["log_response"]


def _sync(run_id: str) -> Iterator[bytes]:
    after: int | None = -1
    while after is not None:
        text, after = log_chunk(run_id, after)
        if text:
            yield text


async def _async(run_id: str) -> AsyncIterator[bytes]:
    after: int | None = -1
    while after is not None:
        text, after = await in_thread(log_chunk, run_id, after)
        if text:
            yield text


def log_response(request: HttpRequest, run_id: str, filename: str) -> StreamingHttpResponse:
    """The run's log as a download named ``filename`` (check the run exists first: once the
    first bytes are sent, no error answer can follow)."""
    content: Any = _async(run_id) if isinstance(request, ASGIRequest) else _sync(run_id)
    response = StreamingHttpResponse(content, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
