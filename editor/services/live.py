"""What the live streams read (spec 05 *events*, spec 06): short, read-only queries.

A stream (``editor.streams``) calls these between waits, from whatever thread it runs its
database work on. Each is one or two indexed queries, so a stream holds no connection or
transaction while it waits.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from editor.engine import PARKED, TERMINAL
from editor.models import Run, RunEvent
from editor.services import inbox
from editor.services.errors import UnknownRun
from editor.services.log_reads import LOG_SLICE_BYTES, fitting
from editor.store import envelope_of

__all__ = [
    "RESTING",
    "TERMINAL_STATES",
    "RunSlice",
    "event_counts",
    "parked_count",
    "run_slice",
    "run_state",
]

#: A run in one of these states waits for nobody's worker: a stream of it ends (spec 05).
RESTING = frozenset(state.value for state in (*PARKED, *TERMINAL))
#: A run in one of these states has ended.
TERMINAL_STATES = frozenset(state.value for state in TERMINAL)
#: Envelopes read per query; a stream reads the next slice straight away when one is full.
SLICE = 500


@dataclass(frozen=True, slots=True)
class RunSlice:
    """A run's envelopes from a position on, and where the run stood when they were read."""

    #: ``(seq, envelope as JSON)`` in ``seq`` order.
    events: list[tuple[int, dict[str, Any]]]
    event_count: int
    state: str
    #: The public status object (spec 05), without the pending items.
    status: dict[str, Any]

    @property
    def resting(self) -> bool:
        return self.state in RESTING

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


def _run_key(run_id: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None


def run_slice(run_id: str, start: int, limit: int = SLICE) -> RunSlice:
    """The run's envelopes ``start``, ``start + 1``, … (at most ``limit``, and at most
    :data:`~editor.services.log_reads.LOG_SLICE_BYTES` of payload, or one event), read after
    the run's row: every event the row counts has committed with it, so a slice never ends
    before the state it reports. Raises :class:`UnknownRun`."""
    key = _run_key(run_id)
    row = Run.objects.filter(pk=key).values("event_count", "state", "status").first()
    if row is None:
        raise UnknownRun(str(run_id))
    count = row["event_count"]
    events: list[tuple[int, dict[str, Any]]] = []
    if start < count:
        rows = RunEvent.objects.filter(run_id=key, seq__gte=start, seq__lt=count).order_by("seq")
        seqs, _more = fitting(rows, limit, LOG_SLICE_BYTES)
        chosen = rows.filter(seq__lte=seqs[-1]) if seqs else rows.none()
        events = [(event.seq, envelope_of(event).as_json()) for event in chosen]
    status = {k: v for k, v in (row["status"] or {"state": row["state"]}).items() if k != "pending"}
    return RunSlice(events, count, row["state"], status)


def run_state(run_id: str) -> tuple[int, str]:
    """``(event count, state)`` of a run. Raises :class:`UnknownRun`."""
    row = Run.objects.filter(pk=_run_key(run_id)).values_list("event_count", "state").first()
    if row is None:
        raise UnknownRun(str(run_id))
    return row[0], row[1]


def event_counts(run_ids: Iterable[str]) -> dict[str, int]:
    """How many events each of these runs' logs holds (one query for them all)."""
    keys = []
    for run_id in run_ids:
        try:
            keys.append(uuid.UUID(run_id))
        except ValueError:
            continue
    rows = Run.objects.filter(pk__in=keys).values_list("id", "event_count")
    return {str(key): count for key, count in rows}


def parked_count() -> int:
    """The navigation bar's count of runs waiting for a person."""
    return inbox.pending_count()
