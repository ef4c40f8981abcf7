"""The query of a paged list: an opaque cursor and a page size (``Query[PageQuery]``)."""

from __future__ import annotations

from ninja import Field, Schema

from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT

__all__ = ["PageQuery"]


class PageQuery(Schema):
    """``cursor`` (from the previous page's ``next``) and ``limit``."""

    cursor: str | None = None
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
