"""Forks: a new run that opens with another run's log up to a node, then drives from there.

A fork of run *O* from node *N* is a new run whose log is *O*'s events below *N*'s
``NodeEntered`` (at the top of the graph), rewritten under the new run's id: every envelope
keeps its ``seq``, ``recorded_at`` and payload, and the first, ``GraphRunStarted``, also records
``forked_from {run_id, through_seq, from_node, graph_hash, acknowledged_writes}``. The new run
is then driven like any re-driven run: the drive replays what the log records (the nodes before
*N*, their calls and resolutions) and executes *N* and what follows for real
(:mod:`editor.engine.history`). The origin is only read.

A fork re-walks the origin's segment from *N* on, so every ``write`` tool call recorded there
may happen again. :func:`plan_fork` lists them (``writes``); a fork goes ahead only when each
is acknowledged by its ``seq`` (:func:`fork_events` raises :class:`WriteReplayHazard`). The
idempotency keys of Gatehouse's calls include the run's id (spec 04), so a write the fork runs
again gets a new key and nothing downstream can fold the two together: every write is listed
with ``idempotency_key: null``, as one that really happens again.

Pure: the services read the origin, call these, and store what they return.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from editor.engine.errors import (
    InvalidForkNode,
    OriginMoving,
    OriginNeedsReconciliation,
    WriteReplayHazard,
)
from editor.engine.ports import Envelope, RunRecord
from editor.engine.states import RunState
from editor.engine.status import run_status

__all__ = ["ForkPlan", "fork_events", "fork_origin", "plan_fork"]

#: The states a run may be forked from: it rests (parked for a person, or finished).
_MOVING = frozenset({RunState.QUEUED.value, RunState.RUNNING.value})


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """Where a fork of ``origin`` from ``from_node`` starts, and what it would run again."""

    origin: str
    from_node: str
    graph_hash: str
    #: The last origin ``seq`` the fork's log holds (one before ``from_node``'s entry).
    through_seq: int
    #: The recorded ``write`` calls at or after ``from_node``'s entry, in log order:
    #: ``{"seq", "tool", "input", "idempotency_key": None, "recorded_at", "node"}``.
    writes: tuple[dict[str, Any], ...] = ()
    #: The ``seq`` of every write the caller acknowledged (a subset of ``writes``'), sorted.
    acknowledged: tuple[int, ...] = field(default=())

    @property
    def prefix_event_count(self) -> int:
        return self.through_seq + 1

    @property
    def unacknowledged(self) -> list[int]:
        taken = set(self.acknowledged)
        return [write["seq"] for write in self.writes if write["seq"] not in taken]

    @property
    def would_proceed(self) -> bool:
        return not self.unacknowledged

    def preview(self) -> dict[str, Any]:
        """The dry run's answer (the reference client's ``ForkPreview``)."""
        return {
            "origin": self.origin,
            "from_node": self.from_node,
            "through_seq": self.through_seq,
            "graph_hash": self.graph_hash,
            "prefix_event_count": self.prefix_event_count,
            "writes": [_public(write) for write in self.writes],
            "unacknowledged_writes": self.unacknowledged,
            "would_proceed": self.would_proceed,
        }

    def origin_record(self) -> dict[str, Any]:
        """``forked_from`` as the fork's first event records it."""
        return {
            "run_id": self.origin,
            "through_seq": self.through_seq,
            "from_node": self.from_node,
            "graph_hash": self.graph_hash,
            "acknowledged_writes": [write["seq"] for write in self.writes],
        }


def _public(write: dict[str, Any]) -> dict[str, Any]:
    return {key: write[key] for key in ("seq", "tool", "input", "idempotency_key", "recorded_at")}


def _entry_seq(events: Sequence[Envelope], node: str) -> int | None:
    for envelope in events:
        payload = envelope.payload
        # A node inside a map's or fold's body (a scope) is no boundary of the walk.
        if (
            envelope.kind == "NodeEntered"
            and payload.get("node") == node
            and not payload.get("scope")
        ):
            return envelope.seq
    return None


def _why_not(events: Sequence[Envelope], run_id: str, node: str) -> str:
    """Why ``node`` is no fork point of this log (it has no top-level ``NodeEntered``)."""
    for envelope in events:
        payload = envelope.payload
        if payload.get("node") != node:
            continue
        if payload.get("scope"):
            owner = payload["scope"][-1][0]
            return (
                f"node `{node}` runs inside the body of `{owner}`; fork from `{owner}` (or the "
                f"node that contains it) to run its items again"
            )
        if envelope.kind == "NodeSkipped":
            return f"run {run_id} skipped node `{node}`: a fork starts at a node the run entered"
    return f"run {run_id} never entered node `{node}`; fork from a node the run reached"


def plan_fork(record: RunRecord, from_node: str, acknowledged: Iterable[int] = ()) -> ForkPlan:
    """Where a fork of ``record`` from ``from_node`` starts and which writes it would run
    again, with ``acknowledged`` (``seq`` values; others are ignored) taken into account.

    Raises :class:`OriginNeedsReconciliation` when the origin waits for a cut-off write,
    :class:`OriginMoving` while it is queued or running, and :class:`InvalidForkNode` when
    ``from_node`` has no ``NodeEntered`` at the top of the origin's graph."""
    events = record.events
    status = run_status(events)
    state = str(status["state"])
    if state == RunState.NEEDS_RECONCILIATION.value:
        intent = next(
            (item for item in status.get("pending", ()) if item["kind"] == "reconciliation"),
            None,
        )
        raise OriginNeedsReconciliation(record.run_id, intent)
    if state in _MOVING:
        raise OriginMoving(record.run_id, state)
    boundary = _entry_seq(events, from_node)
    if boundary is None:
        raise InvalidForkNode(from_node, _why_not(events, record.run_id, from_node))
    writes = []
    for envelope in events[boundary:]:
        payload = envelope.payload
        if envelope.kind == "ToolCallRequested" and payload.get("effect") == "write":
            writes.append(
                {
                    "seq": envelope.seq,
                    "tool": payload.get("tool"),
                    "input": payload.get("input"),
                    "idempotency_key": None,
                    "recorded_at": envelope.recorded_at,
                    "node": payload.get("node"),
                }
            )
    seqs = {write["seq"] for write in writes}
    taken = tuple(sorted({seq for seq in acknowledged if seq in seqs}))
    return ForkPlan(
        origin=record.run_id,
        from_node=from_node,
        graph_hash=record.graph_hash,
        through_seq=boundary - 1,
        writes=tuple(writes),
        acknowledged=taken,
    )


def fork_events(
    plan: ForkPlan, record: RunRecord, child_id: str
) -> tuple[list[Envelope], dict[str, Any]]:
    """The fork's opening events (its whole log before its first drive) and the status after
    them. Raises :class:`WriteReplayHazard` listing the writes still unacknowledged."""
    missing = set(plan.unacknowledged)
    if missing:
        writes = [_public(write) for write in plan.writes if write["seq"] in missing]
        raise WriteReplayHazard(plan.origin, plan.from_node, writes)
    prefix = record.events[: plan.prefix_event_count]
    first = prefix[0]
    opening = Envelope(
        child_id,
        0,
        first.recorded_at,
        first.kind,
        {**first.payload, "forked_from": plan.origin_record()},
        first.schema_version,
    )
    events = [opening]
    events.extend(
        Envelope(
            child_id,
            envelope.seq,
            envelope.recorded_at,
            envelope.kind,
            envelope.payload,
            envelope.schema_version,
        )
        for envelope in prefix[1:]
    )
    return events, run_status(events)


def fork_origin(events: Sequence[Envelope]) -> dict[str, Any] | None:
    """The ``forked_from`` a log's first event records, or ``None`` for a run started anew."""
    if not events or events[0].kind != "GraphRunStarted":
        return None
    origin = events[0].payload.get("forked_from")
    return origin if isinstance(origin, dict) else None
