"""Whole lists as one JSON document, written a page at a time (``GET /v1/runs`` and
``GET /v1/agents`` without ``cursor`` or ``limit``: the reference's shape, every row).

The rows are read by keyset pages (the same queries as the paged lists) and written as each
page is read, so a list of any length costs one page of memory. Under ASGI the reading runs on
the loop's thread pool between writes; under WSGI, in the request's thread.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse
from ninja.responses import NinjaJSONEncoder

from editor.services.paging import Page
from editor.streams.hub import in_thread

__all__ = ["PAGE", "json_list_response", "paged_response"]

#: Rows read per query.
PAGE = 500

Pages = Callable[[str | None, int], Page[Any]]
Render = Callable[[Any], dict[str, Any]]


def _chunk(
    pages: Pages, render: Render, cursor: str | None, first: bool
) -> tuple[bytes, str | None]:
    page = pages(cursor, PAGE)
    rows = [json.dumps(render(item), cls=NinjaJSONEncoder) for item in page.items]
    text = ", ".join(rows)
    if rows and not first:
        text = ", " + text
    return text.encode(), page.next


def _sync(key: str, pages: Pages, render: Render) -> Iterator[bytes]:
    yield f'{{"{key}": ['.encode()
    cursor, first = None, True
    while True:
        text, cursor = _chunk(pages, render, cursor, first)
        first = first and not text
        yield text
        if cursor is None:
            break
    yield b"]}"


async def _async(key: str, pages: Pages, render: Render) -> AsyncIterator[bytes]:
    yield f'{{"{key}": ['.encode()
    cursor, first = None, True
    while True:
        text, cursor = await in_thread(_chunk, pages, render, cursor, first)
        first = first and not text
        if text:
            yield text
        if cursor is None:
            break
    yield b"]}"


def json_list_response(
    request: HttpRequest, key: str, pages: Pages, render: Render
) -> StreamingHttpResponse:
    """``{"<key>": [rows…]}``: ``pages(cursor, limit)`` reads the rows a page at a time
    (``Page.next`` is the next page's cursor), ``render(row)`` is a row as JSON values. Check
    the request's filters first: once the first bytes are sent, no error answer can follow."""
    content: Any = (
        _async(key, pages, render)
        if isinstance(request, ASGIRequest)
        else _sync(key, pages, render)
    )
    return StreamingHttpResponse(content, content_type="application/json")


#: A page of bytes after a cursor, and the next page's cursor (``None``: the last).
BytePages = Callable[[str | None], tuple[bytes, str | None]]


def _sync_pages(head: bytes, pages: BytePages) -> Iterator[bytes]:
    yield head
    cursor = None
    while True:
        chunk, cursor = pages(cursor)
        yield chunk
        if cursor is None:
            return


async def _async_pages(head: bytes, pages: BytePages) -> AsyncIterator[bytes]:
    if head:
        yield head
    cursor = None
    while True:
        chunk, cursor = await in_thread(pages, cursor)
        if chunk:
            yield chunk
        if cursor is None:
            return


def paged_response(
    request: HttpRequest,
    head: bytes,
    pages: BytePages,
    content_type: str,
    filename: str | None = None,
) -> StreamingHttpResponse:
    """``head``, then every page ``pages(cursor)`` reads, each read once the last was sent (an
    export: CSV, JSON lines). ``filename``: offered as a download. Check the request first:
    once the first bytes are sent, no error answer can follow."""
    content: Any = (
        _async_pages(head, pages) if isinstance(request, ASGIRequest) else _sync_pages(head, pages)
    )
    response = StreamingHttpResponse(content, content_type=content_type)
    if filename is not None:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
