"""Reading a run's log a bounded slice at a time: the events page of ``GET /v1/runs/{id}/events``,
the slices of **Download log**, and the envelopes that ``/graph`` and ``/replay`` fold.

A log may hold thousands of events of up to ``GATEHOUSE_EVENT_MAX_BYTES`` each, so a count of
events bounds nothing: every read here is bounded in bytes as well. A slice is chosen in two
queries on the ``(run, seq)`` index: the first asks the database how many bytes each payload's
JSON text has (:class:`PayloadBytes`, computed there, nothing sent but a number a row), the
second reads the texts of the rows that fit. A slice holds at least one event, however large,
so a cursor always moves on; it stops before the event that would pass the bound.

Pages and slices are written from the stored payloads' JSON text, never decoded (only a text
with a run of digits is read and written again, :func:`payload_text`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import orjson
from django.conf import settings
from django.db.models import F, Func, IntegerField, QuerySet, TextField
from django.db.models.functions import Cast

from editor.engine.ports import Envelope
from editor.graph.jsonio import ReferenceJsonDecoder
from editor.models import RunEvent

__all__ = [
    "LOG_SLICE",
    "LOG_SLICE_BYTES",
    "PayloadBytes",
    "events_page",
    "fitting",
    "log_chunk",
    "log_envelopes",
    "payload_text",
]

#: Events read per query while the log is downloaded or folded.
LOG_SLICE = 500
#: And the bytes of payload text they may hold (at least one event): what one slow reader of
#: **Download log** holds while it takes its time.
LOG_SLICE_BYTES = 256 * 1024
#: The bytes of payload text one slice of :func:`log_envelopes` decodes (at least one event).
FOLD_SLICE_BYTES = 4 * 1024 * 1024

#: The rows :func:`fitting` measures first.
FIRST_BATCH = 2

# A run of 20 ASCII digits, written so that the search scans for its first digit at once (as
# ``\d{20}`` it took a tenth of a second over a payload of 800 kB).
_LONG_NUMBER = re.compile(r"[0-9][0-9]{19}")


class PayloadBytes(Func):
    """The bytes of a payload's JSON text (UTF-8), computed by the database."""

    template = "LENGTH(CAST(%(expressions)s AS BLOB))"
    output_field = IntegerField()

    def __init__(self) -> None:
        super().__init__(F("payload"))

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="OCTET_LENGTH((%(expressions)s)::text)", **extra
        )


def fitting(rows: QuerySet[RunEvent], limit: int, max_bytes: int) -> tuple[list[int], bool]:
    """The ``seq`` of the first rows of ``rows`` (in ``seq`` order) that fit: at most ``limit``,
    their payloads at most ``max_bytes`` together, at least one; and whether more follow.

    The sizes are asked for a few rows at first, then for four times as many each time (or
    as many as the bytes left could hold): the database reads each payload it measures, and
    measuring a thousand rows ahead of a page that holds one large event would read them all
    again for every page."""
    taken: list[int] = []
    total = 0
    batch = FIRST_BATCH
    largest = 1
    while True:
        wanted = min(batch, limit + 1 - len(taken))
        after = rows.filter(seq__gt=taken[-1]) if taken else rows
        sized = list(after.values_list("seq", PayloadBytes())[:wanted])
        for seq, size in sized:
            if len(taken) == limit or (taken and total + size > max_bytes):
                return taken, True
            taken.append(seq)
            total += size
            largest = max(largest, size)
        if len(sized) < wanted:
            return taken, False
        room = (max_bytes - total) // largest + 1
        batch = max(1, min(batch * 4, room))


def payload_text(stored: str) -> str:
    """A payload's stored text as a page writes it. ``jsonb`` keeps a number's value, not its
    spelling (the double ``1e100`` comes back as 101 digits, which a client would read as an
    integer): a text with such a run of digits is read under the reference's integer rule and
    written again. Other texts, nearly all of them, are written as stored."""
    if _LONG_NUMBER.search(stored) is None:
        return stored
    value = json.loads(stored, cls=ReferenceJsonDecoder)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _texts(run_id: str, seqs: list[int]) -> Iterator[tuple[int, int, str, str, str]]:
    """``(seq, schema_version, recorded_at, kind, payload text)`` of those rows, in order."""
    if not seqs:
        return iter(())
    rows = RunEvent.objects.filter(run_id=run_id, seq__gte=min(seqs), seq__lte=max(seqs))
    fields = ("seq", "schema_version", "recorded_at", "kind", Cast("payload", TextField()))
    return iter(rows.order_by("seq").values_list(*fields))


def _envelope_bytes(run_field: bytes, row: tuple[int, int, str, str, str]) -> bytes:
    seq, version, recorded_at, kind, payload = row
    return b"".join(
        (
            run_field,
            str(seq).encode(),
            b',"schema_version":',
            str(version).encode(),
            b',"recorded_at":',
            orjson.dumps(recorded_at),
            b',"event":{"kind":',
            orjson.dumps(kind),
            b',"payload":',
            payload_text(payload).encode("utf-8", "surrogatepass"),
            b"}}",
        )
    )


def _slice(run_id: str, after: int | None, limit: int, max_bytes: int) -> tuple[list[int], bool]:
    rows = RunEvent.objects.filter(run_id=run_id).order_by("seq")
    if after is not None:
        rows = rows.filter(seq__gt=after)
    return fitting(rows, limit, max_bytes)


def events_page(run_id: str, after: int | None, limit: int, max_bytes: int | None = None) -> bytes:
    """The JSON body of ``GET /v1/runs/{id}/events``: ``{"events": [...], "next": <after> |
    null}``, the envelopes after ``seq`` ``after`` (exclusive), at most ``limit`` of them and
    at most ``max_bytes`` of payload (``GATEHOUSE_EVENTS_PAGE_BYTES``; at least one event)."""
    budget = settings.GATEHOUSE_EVENTS_PAGE_BYTES if max_bytes is None else max_bytes
    seqs, more = _slice(run_id, after, limit, budget)
    run_field = b'{"run_id":' + orjson.dumps(run_id) + b',"seq":'
    events = b",".join(_envelope_bytes(run_field, row) for row in _texts(run_id, seqs))
    after_next = str(seqs[-1]).encode() if more else b"null"
    return b'{"events":[' + events + b'],"next":' + after_next + b"}"


def log_chunk(
    run_id: str, after: int, size: int = LOG_SLICE, max_bytes: int = LOG_SLICE_BYTES
) -> tuple[bytes, int | None]:
    """The envelopes after ``seq`` ``after`` (``-1``: from the first), at most ``size`` of
    them and ``max_bytes`` of payload (at least one), one JSON object a line; and the
    ``after`` of the next slice, ``None`` at the end."""
    seqs, more = _slice(run_id, after, size, max_bytes)
    run_field = b'{"run_id":' + orjson.dumps(run_id) + b',"seq":'
    text = b"".join(_envelope_bytes(run_field, row) + b"\n" for row in _texts(run_id, seqs))
    return text, seqs[-1] if more else None


def log_envelopes(
    run_id: str, kinds: tuple[str, ...] | None = None, max_bytes: int = FOLD_SLICE_BYTES
) -> Iterator[Envelope]:
    """The run's envelopes in ``seq`` order (only those of ``kinds`` when given), decoded a
    slice of at most ``max_bytes`` of payload at a time: a fold over them holds one slice."""
    rows = RunEvent.objects.filter(run_id=run_id).order_by("seq")
    if kinds is not None:
        rows = rows.filter(kind__in=kinds)
    after = -1
    while True:
        seqs, more = fitting(rows.filter(seq__gt=after), LOG_SLICE, max_bytes)
        if not seqs:
            return
        chosen = rows.filter(seq__gte=seqs[0], seq__lte=seqs[-1])
        fields = ("seq", "recorded_at", "kind", "payload", "schema_version")
        for seq, recorded_at, kind, payload, version in chosen.values_list(*fields):
            yield Envelope(run_id, seq, recorded_at, kind, payload, version)
        if not more:
            return
        after = seqs[-1]
