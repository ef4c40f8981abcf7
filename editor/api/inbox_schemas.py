"""Schemas of the inbox's own operations (``editor.api.inbox``): claims and decisions of several
cards at once (Gatehouse extensions, ``docs/reference-api.md``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema

from editor.api.schemas import _OmitNone
from editor.services.inbox.bulk import MAX_CARDS

__all__ = [
    "BulkDecisionIn",
    "BulkDecisionOut",
    "BulkItemIn",
    "BulkResultOut",
    "ClaimIn",
    "ClaimOut",
]


class ClaimIn(Schema):
    """Which card of the run: its node and ``scope`` (without them, the oldest open item)."""

    node: str | None = Field(None, max_length=200)
    scope: list[tuple[str, int]] | None = Field(None, max_length=64)


class ClaimOut(_OmitNone):
    _omitted_when_none = frozenset({"scope"})

    run: str
    node: str
    #: The position of the event that opened the card's item (its card's id).
    seq: int
    scope: list[tuple[str, int]] | None = None
    #: Who is on it now (``null`` once released), since and until when.
    claimed_by: str | None
    claimed_at: datetime | None
    until: datetime | None


class BulkItemIn(Schema):
    """A card: its run, and its node and ``scope`` when the run waits at several."""

    run: str = Field(max_length=36)
    node: str | None = Field(None, max_length=200)
    scope: list[tuple[str, int]] | None = Field(None, max_length=64)


class BulkDecisionIn(Schema):
    #: Cards of one gate and one approval schema.
    items: list[BulkItemIn] = Field(min_length=1, max_length=MAX_CARDS)
    #: The one answer: checked against each card's schema. A key every card's value holds
    #: that it leaves out is taken from each card's own value.
    input: Any
    comment: str | None = Field(None, max_length=2000)


class BulkResultOut(_OmitNone):
    _omitted_when_none = frozenset({"scope", "seq", "outcome", "error"})

    run: str
    node: str
    seq: int | None = None
    scope: list[tuple[str, int]] | None = None
    #: ``driving`` (decided; the run goes on) or ``voted`` (an approval its quorum counted).
    outcome: str | None = None
    #: Why the card was not decided: the error its own resume would have answered.
    error: dict[str, Any] | None = None


class BulkDecisionOut(Schema):
    results: list[BulkResultOut]
    #: How many cards were decided (``driving`` or ``voted``), and how many were not.
    decided: int
    failed: int
