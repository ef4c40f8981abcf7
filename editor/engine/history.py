"""What a run's log already says, indexed for re-driving (spec 04, *Durability*).

A re-drive walks the graph again from the start; every step the log already records is
taken from here instead of being done again, so no second ``NodeEntered`` is appended, and a
call requested but not completed is re-issued with the same idempotency key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from editor.engine.ports import Envelope
from editor.engine.status import PARKING_KINDS, RESOLUTION_KINDS, scope_key

__all__ = ["CallHistory", "History", "NodeHistory", "Scope", "event_time"]

Scope = tuple[tuple[str, int], ...]


@dataclass(slots=True)
class CallHistory:
    requested: dict[str, Any] | None = None
    completed: dict[str, Any] | None = None
    reconciliation: dict[str, Any] | None = None  # ReconciliationNeeded
    reconciled: dict[str, Any] | None = None  # Reconciled (output or retry)


@dataclass(slots=True)
class NodeHistory:
    entered: bool = False
    exited: bool = False
    output: Any = None
    skipped: bool = False
    case: str | None = None
    fanned_out: bool = False
    iterations_started: set[int] = field(default_factory=set)
    iterations_joined: set[int] = field(default_factory=set)
    converged: bool = False
    tool_calls: dict[int, CallHistory] = field(default_factory=dict)
    model_calls: dict[int, CallHistory] = field(default_factory=dict)
    suspended: dict[str, Any] | None = None
    resumed: dict[str, Any] | None = None
    budget_exceeded: dict[str, Any] | None = None  # the latest, while unresolved
    raised_limits: dict[str, int | float] = field(default_factory=dict)  # kind → latest raise
    #: The run's time in ``running`` when the node was entered (an agent's wall-time budget
    #: counts from there), ``None`` when the log holds no ``NodeEntered`` for it.
    entered_running: float | None = None
    now_observed: str | None = None  # a delay's NowObserved: the clock, read once, ever
    sleep_started: dict[str, Any] | None = None
    sleep_completed: bool = False

    def call(self, calls: dict[int, CallHistory], number: int) -> CallHistory:
        return calls.setdefault(number, CallHistory())


_EMPTY = NodeHistory()


def _item_key(parking_kind: str, payload: dict[str, Any]) -> tuple[str, str, Scope]:
    return (parking_kind, str(payload.get("node")), scope_key(payload.get("scope")))


def event_time(text: str | None) -> datetime | None:
    """An event's ``recorded_at`` (RFC 3339, ``Z``) as a datetime; ``None`` when there is
    none or it cannot be read."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


class History:
    """The recorded steps of one run, by (scope, node)."""

    def __init__(self, events: Iterable[Envelope]) -> None:
        self.nodes: dict[tuple[Scope, str], NodeHistory] = {}
        self.visited = 0
        self.running_seconds = 0.0
        self.map_items = 0  # every item the run's maps fanned out (the node limit's allowance)
        self._last_entered: NodeHistory | None = None
        running_since: datetime | None = None
        # The open items, by key: an item parked again while open (after another item's
        # resolution) is still one item.
        open_items: set[tuple[str, str, Scope]] = set()
        started = False
        # A fork's log opens with its origin's events (spec 05, forks): their time was the
        # origin's, so the fork's own clock starts with its first step after them.
        replayed = -1
        for envelope in events:
            self._feed(envelope)
            at = event_time(envelope.recorded_at)
            kind, payload = envelope.kind, envelope.payload
            if kind == "GraphRunStarted":
                origin = payload.get("forked_from")
                if isinstance(origin, dict) and isinstance(origin.get("through_seq"), int):
                    replayed = origin["through_seq"]
                continue  # time in `queued` does not count: the clock starts with the first step
            if envelope.seq <= replayed:
                continue
            if not started:
                started, running_since = True, at
            if kind == "NodeEntered":
                entered = self._node(payload)
                entered.entered_running = self.running_seconds + (
                    max(0.0, (at - running_since).total_seconds())
                    if at is not None and running_since is not None
                    else 0.0
                )
            if kind in PARKING_KINDS or kind == "SleepStarted":
                if not open_items and running_since is not None and at is not None:
                    self.running_seconds += (at - running_since).total_seconds()
                    running_since = None
                open_items.add(_item_key(kind, payload))
            elif kind in RESOLUTION_KINDS or kind == "SleepCompleted":
                parking = "SleepStarted" if kind == "SleepCompleted" else RESOLUTION_KINDS[kind]
                open_items.discard(_item_key(parking, payload))
                if not open_items and running_since is None:
                    running_since = at
        self._tail_since = running_since

    def running_seconds_until(self, now: datetime) -> float:
        """Time spent in ``running`` so far, up to ``now`` (spec 04's wall-time limit)."""
        if self._tail_since is None:
            return self.running_seconds
        return self.running_seconds + max(0.0, (now - self._tail_since).total_seconds())

    def get(self, scope: Scope, node: str) -> NodeHistory:
        return self.nodes.get((scope, node), _EMPTY)

    def _node(self, payload: dict[str, Any]) -> NodeHistory:
        key = (scope_key(payload.get("scope")), str(payload.get("node")))
        found = self.nodes.get(key)
        if found is None:
            found = self.nodes[key] = NodeHistory()
        return found

    def _feed(self, envelope: Envelope) -> None:
        kind, payload = envelope.kind, envelope.payload
        if kind == "NowObserved":
            # It carries only the instant (the reference's shape): it belongs to the delay
            # entered just before it, in the same append.
            if self._last_entered is not None:
                self._last_entered.now_observed = payload.get("now")
            return
        self._last_entered = None
        if "node" not in payload:
            return
        node = self._node(payload)
        if kind == "NodeEntered":
            node.entered = True
            self.visited += 1
            self._last_entered = node
        elif kind == "NodeExited":
            node.exited = True
            node.output = payload.get("output")
        elif kind == "NodeSkipped":
            node.skipped = True
        elif kind == "BranchTaken":
            node.case = payload.get("case")
        elif kind == "MapFannedOut":
            node.fanned_out = True
            items = payload.get("items")
            if isinstance(items, int) and not isinstance(items, bool):
                self.map_items += max(0, items)
        elif kind in ("MapIterationStarted", "FoldIterationStarted"):
            node.iterations_started.add(int(payload.get("index", -1)))
        elif kind in ("MapIterationJoined", "FoldIterationJoined"):
            node.iterations_joined.add(int(payload.get("index", -1)))
        elif kind == "FoldConverged":
            node.converged = True
        elif kind == "ToolCallRequested":
            call = node.call(node.tool_calls, int(payload.get("call", 0)))
            call.requested = payload
            call.reconciliation = call.reconciled = None  # a retry starts the call afresh
        elif kind == "ToolCallCompleted":
            node.call(node.tool_calls, int(payload.get("call", 0))).completed = payload
        elif kind == "ReconciliationNeeded":
            node.call(node.tool_calls, int(payload.get("call", 0))).reconciliation = payload
        elif kind == "Reconciled":
            node.call(node.tool_calls, int(payload.get("call", 0))).reconciled = payload
        elif kind == "ModelCallRequested":
            node.call(node.model_calls, int(payload.get("call", 0))).requested = payload
        elif kind == "ModelCallCompleted":
            node.call(node.model_calls, int(payload.get("call", 0))).completed = payload
        elif kind == "Suspended":
            node.suspended = payload
        elif kind == "Resumed":
            node.resumed = payload
        elif kind == "SleepStarted":
            node.sleep_started = payload
        elif kind == "SleepCompleted":
            node.sleep_completed = True
        elif kind == "BudgetExceeded":
            node.budget_exceeded = payload
        elif kind == "BudgetRaised":
            node.budget_exceeded = None
            limit = payload.get("limit", 0)
            number = limit if isinstance(limit, (int, float)) and not isinstance(limit, bool) else 0
            node.raised_limits[str(payload.get("kind"))] = number
