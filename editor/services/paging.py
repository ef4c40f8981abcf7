"""Keyset paging: a page of items and the opaque cursor of the next one.

A cursor is the sort key of the last item shown, as JSON in URL-safe base64. It is
opaque to clients; services decode it with :func:`decode_cursor`, which refuses
anything this server could not have handed out.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from editor.services.errors import InvalidCursor

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "Page",
    "decode_cursor",
    "encode_cursor",
    "page_by_number",
    "page_of",
]

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
_MAX_CURSOR_LENGTH = 512


@dataclass(frozen=True, slots=True)
class Page[T]:
    """Items in order, and the cursor for the items after them (``None`` on the last page)."""

    items: list[T]
    next: str | None


def encode_cursor(key: list[Any]) -> str:
    raw = json.dumps(key, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, types: tuple[type, ...]) -> list[Any]:
    """The key inside ``cursor``: a list whose items have exactly ``types``."""
    if len(cursor) > _MAX_CURSOR_LENGTH:
        raise InvalidCursor()
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidCursor() from None
    if (
        not isinstance(key, list)
        or len(key) != len(types)
        or any(type(item) is not kind for item, kind in zip(key, types, strict=True))
    ):
        raise InvalidCursor()
    return key


def page_of[T](items: list[T], limit: int, key_of: Any) -> Page[T]:
    """A page from ``limit + 1`` fetched items: the extra one only says there is more."""
    if len(items) > limit:
        shown = items[:limit]
        return Page(shown, encode_cursor(key_of(shown[-1])))
    return Page(items, None)


def page_by_number[T](
    rows: Any, cursor: str | None, limit: int, shown: Callable[[Any], T]
) -> Page[T]:
    """A page of ``rows`` (a query ordered by ``number``, newest first), each ``shown``; the
    cursor is the last number shown."""
    if cursor is not None:
        (before,) = decode_cursor(cursor, (int,))
        rows = rows.filter(number__lt=before)
    page = page_of(list(rows[: limit + 1]), limit, lambda row: [row.number])
    return Page([shown(row) for row in page.items], page.next)
