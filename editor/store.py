"""The engine's :class:`~editor.engine.ports.RunStore` on the ORM, and the run lease.

A worker drives a run only while it holds the run's **lease** (``Run.lease_owner`` and
``lease_expires_at``, spec 04 *Durability*). Every change is one conditional ``UPDATE`` whose
row count says whether it happened, so the database decides races, not a lock in one process:

* :meth:`OrmRunStore.claim` takes the lease when the run is waiting for a driver (queued or
  running) and nobody holds it, or its holder let it run out;
* :meth:`OrmRunStore.append` (the driver's writes) moves the run on only when the log is where
  the driver last saw it (``event_count``), the driver still holds the lease and the run has
  not finished; otherwise it raises :class:`~editor.engine.errors.RunLost` and writes nothing;
  and only along the transitions of the run-state table, otherwise it raises
  :class:`~editor.engine.errors.TransitionRefused` and writes nothing;
* :meth:`OrmRunStore.record` is the same for the services (start, resume, abandon), which do
  not drive and hold no lease: guarded by ``event_count`` alone, with the unique
  ``(run, seq)`` of the events as the backstop.

The events and the run's new status are written in one transaction, so nothing partial is
ever visible; so are the inbox's cards of the items the events opened, changed or closed
(``editor.waiting``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from editor.channel import announce_append
from editor.engine.errors import AppendRefused, RunLost
from editor.engine.events import check_append
from editor.engine.ports import CallClaim, Envelope, RunRecord
from editor.engine.states import PARKED, TERMINAL, RunState
from editor.engine.status import instant
from editor.engine.summary import call_counts
from editor.engine.transitions import allowed_sources, check_append_states
from editor.models import CallCommitment, FrozenGraph, Run, RunEvent
from editor.waiting import CARD_EVENTS, schedule, sync_cards

__all__ = ["DRIVABLE", "OrmRunStore", "StrandedRun", "envelope_of", "wants_driver"]

#: The states in which a run wants a driver (and ``sleeping`` once its ``wake_at`` has come).
DRIVABLE = (RunState.QUEUED.value, RunState.RUNNING.value)
_SLEEPING = RunState.SLEEPING.value


def wants_driver(now: datetime) -> Q:
    """The runs that want a driver at ``now``: queued or running, or sleeping past their
    ``wake_at`` (spec 08: the drive itself checks the recorded instant again)."""
    return Q(state__in=DRIVABLE) | Q(state=_SLEEPING, wake_at__lte=now)


_STATES = frozenset(state.value for state in RunState)
_TERMINAL = tuple(state.value for state in TERMINAL)
_TERMINAL_SET = frozenset(_TERMINAL)
_PARKED = frozenset(state.value for state in PARKED)
#: Ids per query when the sweep holds a whole backlog (SQLite takes at most 32,766).
_CHUNK = 1000


class StrandedRun(NamedTuple):
    """A run the sweep found without a driver, as it read it."""

    id: str
    owner: str
    expires_at: datetime | None
    attempts: int
    last_error: str
    queue_task: str


def envelope_of(row: RunEvent) -> Envelope:
    return Envelope(
        run_id=str(row.run_id),
        seq=row.seq,
        recorded_at=row.recorded_at,
        kind=row.kind,
        payload=row.payload,
        schema_version=row.schema_version,
    )


def _running_totals(start: int, events: Sequence[Envelope]) -> dict[str, Any]:
    """The run row's totals of the log, moved on by this append's events."""
    steps, tokens_in, tokens_out = call_counts(events)
    totals: dict[str, Any] = {
        "last_recorded_at": events[-1].recorded_at,
        "step_count": F("step_count") + steps,
        "input_tokens": F("input_tokens") + tokens_in,
        "output_tokens": F("output_tokens") + tokens_out,
    }
    if start == 0:
        totals["first_recorded_at"] = events[0].recorded_at
    return totals


def _parked_since(status: dict[str, Any], now: datetime) -> datetime | None:
    """When the run's oldest open item was recorded: the inbox lists runs by it, so a run
    that waits at several gates keeps its place when one of them is resolved. A signal wait
    (a system owes the input, spec 08) is nobody's task: a run waiting on signals alone has
    none, and is not in the inbox."""
    pending = [item for item in status.get("pending") or [] if item.get("wait") != "signal"]
    if status.get("pending") and not pending:
        return None
    try:
        return datetime.fromisoformat(str(pending[0]["at"]))
    except (IndexError, KeyError, TypeError, ValueError):
        return now


class OrmRunStore:
    """The run store of one driver (``owner``), or of a service when it only records."""

    def __init__(
        self,
        owner: str = "",
        lease_seconds: int = 30,
        *,
        on_suspended: Callable[[str, int], None] | None = None,
    ) -> None:
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.lease = timedelta(seconds=lease_seconds)
        #: Called with ``(run id, seq)`` for each ``Suspended`` event once its append has
        #: committed (the worker's drive sends the approvers' notification from it). An
        #: event is committed at its position once, so this runs once per suspension, however
        #: often the run is driven again.
        self.on_suspended = on_suspended
        # The thread that drives; the engine's helper threads (map items) close their own
        # database connections when they end (release_thread).
        self._home_thread = threading.get_ident()
        self.revoked = False

    # --- reading ----------------------------------------------------------------------

    def load_run(self, run_id: str) -> RunRecord:
        return self.record_of(self._run(run_id))

    def record_of(self, run: Run) -> RunRecord:
        """The run as its caller read it, with its log as it is now (read from the database)."""
        events = tuple(envelope_of(row) for row in RunEvent.objects.filter(run=run).order_by("seq"))
        return RunRecord(
            run_id=str(run.id),
            graph_hash=run.graph_id,
            input=run.input,
            events=events,
            labels=dict(run.labels or {}),
            pins=dict(run.test_pins or {}),
        )

    def load_graph(self, graph_hash: str) -> bytes | None:
        canonical = FrozenGraph.objects.filter(hash=graph_hash).values_list("canonical", flat=True)
        value = canonical.first()
        return None if value is None else bytes(value)

    # --- writing ----------------------------------------------------------------------

    def append(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        """The driver's append: needs the lease; renews it."""
        self._write(run_id, events, status, leased=True)

    def record(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        """A service's append (start, resume, abandon): guarded by the log's length only."""
        self._write(run_id, events, status, leased=False)

    def _write(
        self, run_id: str, events: Sequence[Envelope], status: dict[str, Any], *, leased: bool
    ) -> None:
        if leased and self.revoked:
            raise RunLost(f"run {run_id}: the worker's watchdog took the run from this drive")
        if not events:
            raise AppendRefused("nothing to append")
        if any(envelope.run_id != run_id for envelope in events):
            raise AppendRefused("the events belong to another run")
        state = status.get("state")
        if state not in _STATES:
            raise AppendRefused(f"the status names no run state: {state!r}")
        start = events[0].seq
        now = timezone.now()
        changes: dict[str, Any] = {
            "event_count": start + len(events),
            "state": state,
            "status": status,
            "parked_at": _parked_since(status, now) if state in _PARKED else None,
            "wake_at": instant(status.get("wake_at")) if state == _SLEEPING else None,
            "updated_at": now,
        }
        changes.update(_running_totals(start, events))
        # The table of run states is the law (spec 04): the events must move the run from its
        # stored state only along allowed transitions (editor.engine.transitions), so the
        # guard names the states this append may start from, and nothing after the end.
        kinds = [envelope.kind for envelope in events]
        sources = allowed_sources(kinds, state) - _TERMINAL_SET
        guard = Q(event_count=start) & Q(state__in=sources)
        if leased:
            guard &= Q(lease_owner=self.owner)
            changes["lease_expires_at"] = now + self.lease
        # The guard below already refuses anything after a terminal event (the state column
        # moves with the log, in the same transaction), so the last stored event need not be
        # read back: the rest of the strict checks run on the new events alone.
        check_append(start, None, events)
        try:
            with transaction.atomic():
                if not self._runs(run_id).filter(guard).update(**changes):
                    self._refuse(run_id, start, kinds, state, leased=leased)
                RunEvent.objects.bulk_create(
                    [
                        RunEvent(
                            run_id=run_id,
                            seq=envelope.seq,
                            schema_version=envelope.schema_version,
                            recorded_at=envelope.recorded_at,
                            kind=envelope.kind,
                            payload=envelope.payload,
                        )
                        for envelope in events
                    ]
                )
                # The inbox's cards follow the items the append opened, changed or closed, and
                # the deadlines of new ones are queued once it commits (editor.waiting).
                if not CARD_EVENTS.isdisjoint(kinds):
                    schedule(sync_cards(run_id, status))
                # Web processes streaming this run hear of the append once it commits.
                announce_append(run_id, start + len(events))
        except IntegrityError:
            # Someone else took one of these positions first (the unique (run, seq)).
            raise RunLost(f"run {run_id}: another writer recorded event {start} first") from None
        if self.on_suspended is not None:
            notify = self.on_suspended
            for envelope in events:
                if envelope.kind == "Suspended" and envelope.payload.get("kind") != "signal":
                    transaction.on_commit(
                        functools.partial(notify, run_id, envelope.seq), robust=True
                    )

    def _refuse(
        self, run_id: str, start: int, kinds: list[str], state: str, *, leased: bool
    ) -> None:
        """Say why the conditional update matched no row (it wrote nothing)."""
        current = self._runs(run_id).values("state", "event_count", "lease_owner").first()
        if current is None:
            raise RunLost(f"run {run_id} does not exist")
        if current["state"] in _TERMINAL:
            raise RunLost(f"run {run_id} has finished ({current['state']})")
        if current["event_count"] != start:
            raise RunLost(
                f"run {run_id} moved on: its log holds {current['event_count']} events, not {start}"
            )
        if leased and current["lease_owner"] != self.owner:
            raise RunLost(f"run {run_id} is no longer leased to {self.owner}")
        check_append_states(current["state"], kinds, state)  # TransitionRefused, naming it
        raise RunLost(f"run {run_id} changed while it was being written")  # pragma: no cover

    # --- the lease --------------------------------------------------------------------

    def claim(self, run_id: str) -> bool:
        """Take the run's lease: it must want a driver (queued or running), and its lease be
        free, run out, or already ours. ``False`` means another worker drives it, or nothing
        needs to. Each claim counts one drive attempt (``Run.drive_attempts``)."""
        now = timezone.now()
        free = Q(lease_owner="") | Q(lease_owner=self.owner) | Q(lease_expires_at__lt=now)
        return bool(
            self._runs(run_id)
            .filter(free, wants_driver(now))
            .update(
                lease_owner=self.owner,
                lease_expires_at=now + self.lease,
                drive_attempts=F("drive_attempts") + 1,
            )
        )

    def renew(self, run_id: str) -> bool:
        """Extend the lease; ``False`` when it is no longer ours (another worker took it)."""
        return bool(
            self._runs(run_id)
            .filter(lease_owner=self.owner)
            .update(lease_expires_at=timezone.now() + self.lease)
        )

    def release(self, run_id: str, *, clean: bool = False, error: str = "") -> None:
        """Give the lease up, if it is still ours. ``clean``: the drive ended as it should (the
        run parked, ended, or was lost to someone else), so its attempts start again from
        nothing; otherwise they stand, with ``error`` saying why this one stopped."""
        changes: dict[str, Any] = {"lease_owner": "", "lease_expires_at": None}
        if clean:
            changes.update(drive_attempts=0, drive_error="")
        elif error:
            changes["drive_error"] = error[:200]
        self._runs(run_id).filter(lease_owner=self.owner).update(**changes)

    # --- the sweep: runs whose driver is gone ------------------------------------------

    def stranded_runs(self, now: datetime) -> list[StrandedRun]:
        """The runs that want a driver and have none at ``now``: their lease ran out (the
        worker died), or nobody claimed them within a lease period of their last change."""
        rows = Run.objects.filter(self._stranded(now)).values_list(
            "id", "lease_owner", "lease_expires_at", "drive_attempts", "drive_error", "queue_task"
        )
        return [StrandedRun(str(row[0]), *row[1:]) for row in rows]

    def due_sleepers(self, now: datetime) -> list[StrandedRun]:
        """The sleeping runs whose ``wake_at`` has come and that no driver holds: the
        waker's one query, on the ``wake_at`` index (nothing due reads no row)."""
        rows = Run.objects.filter(self._due(now)).values_list(
            "id", "lease_owner", "lease_expires_at", "drive_attempts", "drive_error", "queue_task"
        )
        return [StrandedRun(str(row[0]), *row[1:]) for row in rows]

    def hold_unclaimed(self, run_ids: Sequence[str], now: datetime) -> None:
        """Give these never-claimed runs (their task still waits in the queue) a fresh,
        ownerless lease, so the sweep asks about them again a lease period later."""
        for start in range(0, len(run_ids), _CHUNK):
            Run.objects.filter(
                self._stranded(now),
                id__in=run_ids[start : start + _CHUNK],
                lease_owner="",
            ).update(lease_expires_at=now + self.lease)

    def reclaim(self, run_id: str, expires_at: datetime | None, until: datetime) -> bool:
        """Take a stranded run for the sweep: an ownerless lease until ``until``, given only
        while its lease is still the one the sweep read (``expires_at``), so of several
        workers sweeping at once exactly one takes it."""
        return bool(
            self._runs(run_id)
            .filter(wants_driver(timezone.now()), lease_expires_at=expires_at)
            .update(lease_owner="", lease_expires_at=until)
        )

    def _stranded(self, now: datetime) -> Q:
        lease_out = Q(lease_expires_at__lt=now)
        awake = Q(state__in=DRIVABLE) & (
            lease_out | Q(lease_expires_at__isnull=True, updated_at__lt=now - self.lease)
        )
        return awake | self._due(now)

    def _due(self, now: datetime) -> Q:
        # A sleeping run is due at its wake_at, however recently it went to sleep: the waker
        # and the sweep are the safety net of the drive queued for that instant (editor.tasks).
        lease_out = Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True)
        return Q(state=_SLEEPING, wake_at__lte=now) & lease_out

    def revoke(self) -> None:
        """Refuse every later append of this store's drive (``RunLost``): the worker's
        watchdog took the run from a drive that overran, and a drive that wakes up later
        must write nothing."""
        self.revoked = True

    def claim_call(self, tool: str, key: str, run_id: str, input: Any) -> CallClaim:
        """:class:`~editor.engine.ports.CallCommitments`: the unique ``(tool, key)`` row
        arbitrates. A holder that finished (failed or abandoned) without settling the call
        never made it: the claim passes to the caller."""
        try:
            with transaction.atomic():
                CallCommitment.objects.create(tool=tool, key=key, run_id=run_id, input=input)
            return CallClaim(run_id, input)
        except IntegrityError:
            pass
        held = CallCommitment.objects.get(tool=tool, key=key)
        if not held.settled and held.run_id != run_id:
            finished = Run.objects.filter(pk=held.run_id, state__in=TERMINAL).exists()
            gone = not Run.objects.filter(pk=held.run_id).exists()
            if finished or gone:
                taken = CallCommitment.objects.filter(
                    pk=held.pk, run_id=held.run_id, settled=False
                ).update(run_id=run_id, input=input)
                if taken:
                    return CallClaim(run_id, input)
                held.refresh_from_db()
        return CallClaim(held.run_id, held.input, held.settled, held.output)

    def settle_call(self, tool: str, key: str, run_id: str, output: Any) -> None:
        CallCommitment.objects.filter(tool=tool, key=key, run_id=run_id).update(
            settled=True, output=output
        )

    def release_thread(self) -> None:
        if threading.get_ident() != self._home_thread:
            connection.close()

    # --- helpers ----------------------------------------------------------------------

    def _runs(self, run_id: str) -> Any:
        try:
            return Run.objects.filter(id=run_id)
        except (ValidationError, ValueError):
            return Run.objects.none()

    def _run(self, run_id: str) -> Run:
        run = self._runs(run_id).first()
        if run is None:
            raise RunLost(f"run {run_id} does not exist")
        return run
