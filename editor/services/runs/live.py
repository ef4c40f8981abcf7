"""What the live streams read (spec 05 *events*, spec 06): short, read-only queries.

A stream (``editor.streams``) calls these between waits, from whatever thread it runs its
database work on. Each is one or two indexed queries, so a stream holds no connection or
transaction while it waits, and each answer is bounded in bytes (:data:`SLICE_BYTES`), so a
stream holds at most one slice while its reader catches up.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

import orjson
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

from editor.engine import PARKED, TERMINAL, RunState
from editor.models import ApiToken, Run, RunEvent
from editor.services.errors import UnknownRun
from editor.services.runs.log_reads import LOG_SLICE_BYTES, fitting
from editor.store import envelope_of

__all__ = [
    "RESTING",
    "SLICE_BYTES",
    "TERMINAL_STATES",
    "Credentials",
    "RunSlice",
    "event_counts",
    "run_slice",
    "run_state",
]

#: A run in one of these states waits for nobody's worker: a stream of it ends (spec 05; a
#: sleeping run rests too, spec 08: a client opens the stream again after the wake).
RESTING = frozenset(state.value for state in (*PARKED, *TERMINAL, RunState.SLEEPING))
#: A run in one of these states has ended.
TERMINAL_STATES = frozenset(state.value for state in TERMINAL)
#: Envelopes read per query; a stream reads the next slice straight away when one is full.
SLICE = 500
#: A slice ends once its envelopes reach this many bytes (it always holds at least one).
SLICE_BYTES = LOG_SLICE_BYTES


@dataclass(frozen=True, slots=True)
class RunSlice:
    """A run's envelopes from a position on, and where the run stood when they were read."""

    #: ``(seq, envelope as compact JSON)`` in ``seq`` order.
    events: list[tuple[int, bytes]]
    #: Where the next slice starts: after the last envelope read, or at ``event_count`` when
    #: nothing more is stored below it (a pruned run's log has gaps, up to its end).
    next_start: int
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


def run_slice(
    run_id: str, start: int, limit: int = SLICE, max_bytes: int = SLICE_BYTES
) -> RunSlice:
    """The run's envelopes ``start``, ``start + 1``, … (at most ``limit``, and no more than
    ``max_bytes`` of payload past the first, measured by the database before any payload is
    read: :func:`~editor.services.runs.log_reads.fitting`), read after the run's row: every event
    the row counts has committed with it, so a slice never ends before the state it reports.
    Raises :class:`UnknownRun`."""
    key = _run_key(run_id)
    row = Run.objects.filter(pk=key).values("event_count", "state", "status").first()
    if row is None:
        raise UnknownRun(str(run_id))
    count = row["event_count"]
    events: list[tuple[int, bytes]] = []
    next_start = max(start, count)
    if start < count:
        rows = RunEvent.objects.filter(run_id=key, seq__gte=start, seq__lt=count).order_by("seq")
        seqs, full = fitting(rows, limit, max_bytes)
        chosen = rows.filter(seq__lte=seqs[-1]) if seqs else rows.none()
        events = [
            (event.seq, orjson.dumps(envelope_of(event).as_json()))
            for event in chosen.iterator(chunk_size=50)
        ]
        # A slice that stopped short of a limit read every row stored below ``count``.
        next_start = events[-1][0] + 1 if full and events else count
    status = {k: v for k, v in (row["status"] or {"state": row["state"]}).items() if k != "pending"}
    return RunSlice(events, next_start, count, row["state"], status)


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


@dataclass(frozen=True, slots=True)
class Credentials:
    """What let a stream's caller in, re-checked while the stream is open: the user, and the
    API token (its digest) or the browser session (its key) that signed the request."""

    user_id: int
    token_digest: str | None = None
    session_key: str | None = None

    @classmethod
    def of(cls, user_id: int, bearer: str | None, session_key: str | None) -> Credentials:
        digest = hashlib.sha256(bearer.encode("utf-8")).hexdigest() if bearer else None
        return cls(user_id, digest, session_key)

    def still_valid(self) -> bool:
        """Whether the caller may still read: the user is active, and the token is not revoked
        or the session still signs that user in (not signed out, not expired, the password
        not changed since). One to three indexed queries."""
        if (
            self.token_digest is not None
            and ApiToken.objects.filter(
                digest=self.token_digest,
                revoked_at__isnull=True,
                user_id=self.user_id,
                user__is_active=True,
            ).exists()
        ):
            return True
        if self.session_key is None:
            return False
        user = get_user_model().objects.filter(pk=self.user_id, is_active=True).first()
        if user is None:
            return False
        store = import_module(settings.SESSION_ENGINE).SessionStore(self.session_key)
        data = store.load()
        if str(data.get(SESSION_KEY)) != str(user.pk):
            return False
        return constant_time_compare(data.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash())
