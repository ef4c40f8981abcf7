"""A run's events as its page shows them (spec 06, *Runs*): the timeline newest first, a page
at a time (**Load older**), one event's whole payload on demand, and **Download log**.

Every page is one query on the log's ``(run, seq)`` index, whatever the log's length: the
newest page, the page before a ``seq`` (the cursor of **Load older**), the events a live page
has not shown yet. Each row shows its payload as compact JSON cut to
:data:`EVENT_SUMMARY_CHARS`; :func:`event_payload` gives one payload whole. The log itself
(:func:`log_chunk`) is the envelopes as ``GET /v1/runs/{id}/events`` serves them, one JSON
object a line, read a slice at a time so a log of any length streams in constant memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import orjson

from editor.engine import EVENT_FIELDS, compact_json
from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.graph.jsonio import pretty_json
from editor.models import RunEvent
from editor.services.run_rows import run_row
from editor.store import envelope_of

__all__ = [
    "EVENT_SUMMARY_CHARS",
    "LOG_SLICE",
    "PAGE",
    "EventPayload",
    "TimelineEvent",
    "TimelinePage",
    "event_payload",
    "log_chunk",
    "newest",
    "node_url",
    "older",
    "since",
]

#: Events per page of the timeline.
PAGE = 50
#: The timeline shows each payload as compact JSON cut to this many characters.
EVENT_SUMMARY_CHARS = 300
#: Events read per query while the log is downloaded.
LOG_SLICE = 500


def node_url(run_id: str, node: str, level: Iterable[str] = ()) -> str:
    """The address of a node's detail on a run's page (``level``: its subgraph owners)."""
    query = urlencode([*(("in", owner) for owner in level), ("node", node)])
    return f"/runs/{run_id}/node/?{query}"


def scope_text(scope: Any) -> str:
    """A payload's ``scope`` as people read it: ``m[2] › f[0]``."""
    if not isinstance(scope, list):
        return ""
    parts = []
    for pair in scope:
        if isinstance(pair, list) and len(pair) == 2:
            parts.append(f"{pair[0]}[{pair[1]}]")
    return " › ".join(parts)


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    seq: int
    at: datetime | None
    kind: str
    node: str | None
    #: Where inside maps and folds (``m[2]``), empty at the top.
    scope: str
    #: The payload (without ``node`` and ``scope``, shown apart) as compact JSON, cut.
    summary: str
    #: Whether ``summary`` was cut (the whole payload is one request away).
    cut: bool
    #: ``False`` for a kind this version does not model: it is shown raw under its kind.
    known: bool
    #: The node's detail on the run page, for an event of a node at the top.
    node_url: str | None = None


@dataclass(frozen=True, slots=True)
class TimelinePage:
    """Events newest first; ``older`` is the cursor of the page before them (the ``before`` of
    **Load older**), ``None`` when they reach the first event."""

    events: list[TimelineEvent]
    older: int | None
    #: For a live page: these are the newest page, to show instead of its rows (more events
    #: arrived than one page holds), not rows to add above them.
    replaces: bool = False


def timeline_event(run_id: str, envelope: Envelope) -> TimelineEvent:
    kind = envelope.kind
    payload = dict(envelope.payload)
    known = kind in EVENT_FIELDS
    node = payload.get("node") if known else None
    scope = payload.get("scope") if known else None
    if known:
        payload.pop("node", None)
        payload.pop("scope", None)
    text = compact_json(payload) if payload else ""
    cut = len(text) > EVENT_SUMMARY_CHARS
    if cut:
        text = text[: EVENT_SUMMARY_CHARS - 1] + "…"
    url = None
    if isinstance(node, str) and not scope:
        url = node_url(run_id, node)
    return TimelineEvent(
        seq=envelope.seq,
        at=event_time(envelope.recorded_at),
        kind=kind,
        node=None if node is None else str(node),
        scope=scope_text(scope),
        summary=text,
        cut=cut,
        known=known,
        node_url=url,
    )


def _page(run_id: str, rows: list[RunEvent], limit: int) -> TimelinePage:
    shown = rows[:limit]
    events = [timeline_event(run_id, envelope_of(row)) for row in shown]
    more = len(rows) > limit and bool(shown)
    return TimelinePage(events, shown[-1].seq if more else None)


def _rows(run_id: str, *, before: int, limit: int = PAGE) -> list[RunEvent]:
    rows = RunEvent.objects.filter(run_id=run_id, seq__lt=before)
    return list(rows.order_by("-seq")[: limit + 1])


def newest(run_id: str, count: int, limit: int = PAGE) -> TimelinePage:
    """The newest ``limit`` of the run's first ``count`` events (its row's count: events
    appended since the row was read wait for the next update, so the page never shows events
    beyond the state it shows), newest first."""
    return _page(run_id, _rows(run_id, before=count, limit=limit), limit)


def older(run_id: str, before: int, limit: int = PAGE) -> TimelinePage:
    """The ``limit`` events before ``seq`` ``before``, newest first. Raises ``UnknownRun``."""
    run = run_row(run_id)
    key = str(run.id)
    return _page(key, _rows(key, before=max(0, before), limit=limit), limit)


def since(run_id: str, count: int, seen: int, limit: int = PAGE) -> TimelinePage:
    """For a live page showing the run's first ``seen`` events, of ``count`` now: those after
    them, newest first; or, when more than a page arrived, the newest page to show instead."""
    if count - seen > limit:
        return TimelinePage(**{**_fields(newest(run_id, count, limit)), "replaces": True})
    rows = RunEvent.objects.filter(run_id=run_id, seq__gte=max(0, seen), seq__lt=count)
    events = [timeline_event(run_id, envelope_of(row)) for row in rows.order_by("-seq")]
    return TimelinePage(events, None)


def _fields(page: TimelinePage) -> dict[str, Any]:
    return {"events": page.events, "older": page.older}


@dataclass(frozen=True, slots=True)
class EventPayload:
    event: TimelineEvent
    #: The whole payload, indented JSON.
    text: str


def event_payload(run_id: str, seq: int) -> EventPayload | None:
    """One event of the run with its whole payload; ``None`` when the log has no such
    ``seq``. Raises ``UnknownRun``."""
    run = run_row(run_id)
    row = RunEvent.objects.filter(run=run, seq=seq).first()
    if row is None:
        return None
    envelope = envelope_of(row)
    text = pretty_json(envelope.payload)
    return EventPayload(timeline_event(str(run.id), envelope), text)


def log_chunk(run_id: str, after: int, size: int = LOG_SLICE) -> tuple[bytes, int | None]:
    """The envelopes after ``seq`` ``after`` (``-1``: from the first), at most ``size`` of
    them, one JSON object a line; and the ``after`` of the next slice, ``None`` at the end."""
    rows = list(RunEvent.objects.filter(run_id=run_id, seq__gt=after).order_by("seq")[: size + 1])
    shown = rows[:size]
    text = b"".join(orjson.dumps(envelope_of(row).as_json()) + b"\n" for row in shown)
    return text, shown[-1].seq if len(rows) > size else None
