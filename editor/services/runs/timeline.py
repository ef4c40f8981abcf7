"""A run's events as its page shows them (spec 06, *Runs*): the timeline newest first, a page
at a time (**Load older**), one event's whole payload on demand, and **Download log**.

Every page is read on the log's ``(run, seq)`` index, whatever the log's length: the newest
page, the page before a ``seq`` (the cursor of **Load older**), the events a live page has not
shown yet. Each row shows its payload as compact JSON cut to :data:`EVENT_SUMMARY_CHARS`; a
payload over :data:`WHOLE_PAYLOAD_BYTES` is not read for it, only the start of its text (the
database cuts it), so a page costs a bounded read whatever its events weigh.
:func:`event_payload` gives one payload, whole up to :data:`SHOWN_PAYLOAD_BYTES` and cut
beyond, with :func:`payload_download` for the whole of it. The log itself is
:mod:`editor.services.runs.log_reads`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import F, Func, QuerySet, TextField
from django.db.models.functions import Cast, Substr

from editor.engine import EVENT_FIELDS, compact_json
from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.graph.jsonio import pretty_json
from editor.models import RunEvent
from editor.services.runs.log_reads import PayloadBytes, payload_text
from editor.services.runs.rows import run_row
from editor.store import envelope_of

__all__ = [
    "EVENT_SUMMARY_CHARS",
    "PAGE",
    "SHOWN_PAYLOAD_BYTES",
    "EventPayload",
    "TimelineEvent",
    "TimelinePage",
    "event_payload",
    "newest",
    "node_url",
    "older",
    "payload_download",
    "since",
]

#: Events per page of the timeline.
PAGE = 50
#: The timeline shows each payload as compact JSON cut to this many characters.
EVENT_SUMMARY_CHARS = 300
#: A payload up to this many bytes is read whole for its row's summary; a larger one only as
#: far as :data:`HEAD_CHARS` of its text.
WHOLE_PAYLOAD_BYTES = 16 * 1024
HEAD_CHARS = 1024
#: The event's page shows its whole payload up to this many bytes, and beyond it this many
#: characters of its text, with a link to the whole of it (``payload.json``).
SHOWN_PAYLOAD_BYTES = 64 * 1024


class _WithoutPlace(Func):
    """A payload's JSON text without its ``node`` and ``scope`` (shown apart)."""

    template = "JSON_REMOVE(%(expressions)s, '$.node', '$.scope')"
    output_field = TextField()

    def __init__(self) -> None:
        super().__init__(F("payload"))

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "((%(expressions)s - 'node') - 'scope')::text"
        return self.as_sql(compiler, connection, template=template, **extra)


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
    return _event(run_id, envelope.seq, envelope.recorded_at, kind, node, scope, text)


def _event(
    run_id: str, seq: int, recorded_at: str, kind: str, node: Any, scope: Any, text: str
) -> TimelineEvent:
    cut = len(text) > EVENT_SUMMARY_CHARS
    if cut:
        text = text[: EVENT_SUMMARY_CHARS - 1] + "…"
    url = None
    if isinstance(node, str) and not scope:
        url = node_url(run_id, node)
    return TimelineEvent(
        seq=seq,
        at=event_time(recorded_at),
        kind=kind,
        node=None if node is None else str(node),
        scope=scope_text(scope),
        summary=text,
        cut=cut,
        known=kind in EVENT_FIELDS,
        node_url=url,
    )


def _large_event(run_id: str, row: tuple[Any, ...]) -> TimelineEvent:
    """A row whose payload is over :data:`WHOLE_PAYLOAD_BYTES`, read without it: its node and
    scope, and the start of its JSON text without them, in the database's spelling made
    compact (it is cut anyway)."""
    seq, recorded_at, kind, _size, node, scope, head = row
    known = kind in EVENT_FIELDS
    text = compact_text(head or "")
    return _event(run_id, seq, recorded_at, kind, node if known else None,
                  scope if known else None, text + "…")  # fmt: skip


def compact_text(head: str) -> str:
    """The start of a JSON text without the spaces between its tokens."""
    out: list[str] = []
    in_string = escaped = False
    for char in head:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif not char.isspace():
            out.append(char)
    return "".join(out)


def _timeline(
    run_id: str, rows: QuerySet[RunEvent], limit: int
) -> tuple[list[TimelineEvent], bool]:
    """The first ``limit`` rows of ``rows`` as timeline events, and whether more follow. A
    payload up to :data:`WHOLE_PAYLOAD_BYTES` is read whole; a larger one only as far as its
    summary needs, so a page costs at most ``limit`` times that, whatever the events weigh."""
    head = Substr(_WithoutPlace(), 1, HEAD_CHARS)
    fields = ("seq", "recorded_at", "kind", PayloadBytes(), "payload__node", "payload__scope")
    sized = list(rows.values_list(*fields, head)[: limit + 1])
    shown = sized[:limit]
    small = [row[0] for row in shown if row[3] <= WHOLE_PAYLOAD_BYTES]
    whole = {
        row.seq: row
        for row in RunEvent.objects.filter(run_id=run_id, seq__in=small)
    } if small else {}  # fmt: skip
    events = [
        timeline_event(run_id, envelope_of(whole[row[0]]))
        if row[0] in whole
        else _large_event(run_id, row)
        for row in shown
    ]
    return events, len(sized) > limit


def _page(run_id: str, rows: QuerySet[RunEvent], limit: int) -> TimelinePage:
    events, more = _timeline(run_id, rows, limit)
    return TimelinePage(events, events[-1].seq if more and events else None)


def _rows(run_id: str, *, before: int) -> QuerySet[RunEvent]:
    return RunEvent.objects.filter(run_id=run_id, seq__lt=before).order_by("-seq")


def newest(run_id: str, count: int, limit: int = PAGE) -> TimelinePage:
    """The newest ``limit`` of the run's first ``count`` events (its row's count: events
    appended since the row was read wait for the next update, so the page never shows events
    beyond the state it shows), newest first."""
    return _page(run_id, _rows(run_id, before=count), limit)


def older(run_id: str, before: int, limit: int = PAGE) -> TimelinePage:
    """The ``limit`` events before ``seq`` ``before``, newest first. Raises ``UnknownRun``."""
    run = run_row(run_id)
    key = str(run.id)
    return _page(key, _rows(key, before=max(0, before)), limit)


def since(run_id: str, count: int, seen: int, limit: int = PAGE) -> TimelinePage:
    """For a live page showing the run's first ``seen`` events, of ``count`` now: those after
    them, newest first; or, when more than a page arrived, the newest page to show instead."""
    if count - seen > limit:
        return TimelinePage(**{**_fields(newest(run_id, count, limit)), "replaces": True})
    rows = RunEvent.objects.filter(run_id=run_id, seq__gte=max(0, seen), seq__lt=count)
    events, _more = _timeline(run_id, rows.order_by("-seq"), limit)
    return TimelinePage(events, None)


def _fields(page: TimelinePage) -> dict[str, Any]:
    return {"events": page.events, "older": page.older}


@dataclass(frozen=True, slots=True)
class EventPayload:
    event: TimelineEvent
    #: The whole payload, indented JSON; or, when ``cut``, the start of its JSON text.
    text: str
    #: Whether ``text`` is only the start of a payload over :data:`SHOWN_PAYLOAD_BYTES`.
    cut: bool = False
    #: The bytes of the payload's JSON text.
    size: int = 0


def event_payload(run_id: str, seq: int) -> EventPayload | None:
    """One event of the run with its payload: whole up to :data:`SHOWN_PAYLOAD_BYTES`, else
    the start of its text (the page links to the whole of it, :func:`payload_download`), so
    the page costs a bounded read whatever the event weighs; ``None`` when the log has no
    such ``seq``. Raises ``UnknownRun``."""
    run = run_row(run_id)
    key = str(run.id)
    rows = RunEvent.objects.filter(run=run, seq=seq)
    head = Substr(Cast("payload", TextField()), 1, SHOWN_PAYLOAD_BYTES)
    found = rows.values_list(
        "recorded_at", "kind", PayloadBytes(), "payload__node", "payload__scope", head
    ).first()
    if found is None:
        return None
    recorded_at, kind, size, node, scope, text = found
    if size <= SHOWN_PAYLOAD_BYTES:
        row = rows.get()
        envelope = envelope_of(row)
        return EventPayload(
            timeline_event(key, envelope), pretty_json(envelope.payload), False, size
        )
    event = _large_event(key, (seq, recorded_at, kind, size, node, scope, text[:HEAD_CHARS]))
    return EventPayload(event, text, True, size)


def payload_download(run_id: str, seq: int) -> bytes | None:
    """**The whole payload** of one event, its JSON text as ``GET /v1/runs/{id}/events``
    writes it (one event: at most the event cap); ``None`` when the log has no such ``seq``.
    Raises ``UnknownRun``."""
    run = run_row(run_id)
    stored = (
        RunEvent.objects.filter(run=run, seq=seq)
        .values_list(Cast("payload", TextField()), flat=True)
        .first()
    )
    return None if stored is None else payload_text(stored).encode("utf-8", "surrogatepass")
