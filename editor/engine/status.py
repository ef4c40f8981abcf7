"""The run's status and its canvas projection: pure folds of the event log (spec 04, 05).

:class:`StatusFold` is fed one envelope at a time (the engine keeps one while it appends);
:func:`run_status` folds a whole log. Parking events (``Suspended``, ``BudgetExceeded``,
``ReconciliationNeeded``) open *pending* items; their resolutions (``Resumed``,
``BudgetRaised``, ``Reconciled``) close them; a vote (``ApprovalVoted``, one approval of a gate
that needs several) is kept on its item as ``votes: [{"by", "at", "seq"}]``, and an escalation
(``GateEscalated``, a gate's due time passed and its policy names more deciders) as
``escalated: {"to": {"groups", "users"}, "at", "seq"}``.

The state moves only along the table of :mod:`editor.engine.states`: a parking event parks a
running run in its own state, and adds an item to a parked one; a resolution leaves the run
parked while items of the same kind are open, and otherwise returns it to ``running`` (the
table's *resolved* edges) until a parking event parks it again — so a run whose last gate was
resolved while a budget item is still open goes ``suspended → running → budget_exceeded``, and
:func:`editor.engine.records.prepare_resume` appends that second parking in the same step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from editor.engine.ports import Envelope
from editor.engine.states import PARKED, RunState

__all__ = [
    "ESCALATION_KINDS",
    "ITEM_KINDS",
    "PARKING_KINDS",
    "RESOLUTION_KINDS",
    "VOTE_KINDS",
    "StatusFold",
    "graph_projection",
    "instant",
    "last_resolution",
    "run_status",
    "scope_key",
    "with_overdue",
]

# parking event kind → (pending kind, run state, resolution event kind)
PARKING_KINDS: dict[str, tuple[str, RunState, str]] = {
    "Suspended": ("gate", RunState.SUSPENDED, "Resumed"),
    "BudgetExceeded": ("budget", RunState.BUDGET_EXCEEDED, "BudgetRaised"),
    "ReconciliationNeeded": ("reconciliation", RunState.NEEDS_RECONCILIATION, "Reconciled"),
}
RESOLUTION_KINDS: dict[str, str] = {
    resolved: kind for kind, (_, _, resolved) in PARKING_KINDS.items()
}
#: An event that adds a vote to an open item and leaves the run where it is: one approval of a
#: gate that needs several (``engine.approvals``). Vote kind → the pending kind it counts for.
VOTE_KINDS: dict[str, str] = {"ApprovalVoted": "gate"}
#: An event that widens who may decide an open gate once its due time passed (the policy's
#: ``on_expiry.escalate_to``) and leaves the run where it is. Kind → the pending kind.
ESCALATION_KINDS: dict[str, str] = {"GateEscalated": "gate"}
#: Every event that changes an open item without resolving it: the run stays where it is.
ITEM_KINDS: dict[str, str] = {**VOTE_KINDS, **ESCALATION_KINDS}
_PENDING_KIND_OF = {state: pending for pending, state, _ in PARKING_KINDS.values()}
_PENDING_FIELDS = {
    "Suspended": ("reason", "input_schema", "value"),
    "BudgetExceeded": ("budget", "observed"),
    "ReconciliationNeeded": ("tool", "call", "input"),
}


def scope_key(scope: Any) -> tuple[tuple[str, int], ...]:
    """A payload's ``scope`` (a list of ``[owner, index]`` pairs, or absent) as a hashable key."""
    if not scope:
        return ()
    return tuple((str(owner), int(index)) for owner, index in scope)


class StatusFold:
    """The status object of spec 05, folded one event at a time."""

    def __init__(self) -> None:
        self.state = RunState.QUEUED
        self.terminal: dict[str, Any] | None = None
        self.pending: dict[tuple[str, str, tuple[tuple[str, int], ...]], dict[str, Any]] = {}
        self.count = 0
        #: The wait a sleeping run rests in: ``{"wake_at", "node"}`` (spec 08, section 1).
        self.sleep: dict[str, Any] | None = None

    def feed(self, envelope: Envelope) -> None:
        self.count += 1
        kind, payload = envelope.kind, envelope.payload
        if kind == "RunCompleted":
            self.terminal = {"state": RunState.COMPLETED.value, "output": payload.get("output")}
        elif kind == "RunFailed":
            self.terminal = {"state": RunState.FAILED.value, "error": payload.get("error", "")}
            if payload.get("code"):
                self.terminal["code"] = payload["code"]
        elif kind == "RunAbandoned":
            self.terminal = {"state": RunState.ABANDONED.value}
            if payload.get("reason"):
                self.terminal["reason"] = payload["reason"]
        elif kind in PARKING_KINDS:
            pending_kind, parked_state, _ = PARKING_KINDS[kind]
            key = (pending_kind, str(payload.get("node")), scope_key(payload.get("scope")))
            item: dict[str, Any] = {"kind": pending_kind, "node": payload.get("node")}
            if payload.get("scope"):
                item["scope"] = payload["scope"]
            opened = self.pending.get(key)
            # An item parked again while still open (after another item's resolution) keeps
            # its place: when it was first recorded.
            item["seq"] = envelope.seq if opened is None else opened["seq"]
            item["at"] = envelope.recorded_at if opened is None else opened["at"]
            if opened is not None and opened.get("votes"):
                item["votes"] = opened["votes"]
            if opened is not None and opened.get("escalated"):
                item["escalated"] = opened["escalated"]
            for name in _PENDING_FIELDS[kind]:
                if name in payload:
                    item[name] = payload[name]
            if kind == "Suspended" and payload.get("kind") == "signal":
                item["wait"] = "signal"  # a system owes the input: nobody's task (spec 08)
            self.pending[key] = item
            if self.state not in PARKED:
                self.state = parked_state
            return
        elif kind in VOTE_KINDS:
            key = (VOTE_KINDS[kind], str(payload.get("node")), scope_key(payload.get("scope")))
            voted = self.pending.get(key)
            if voted is not None:
                vote = {"by": payload.get("by"), "at": envelope.recorded_at, "seq": envelope.seq}
                self.pending[key] = {**voted, "votes": [*voted.get("votes", ()), vote]}
            return
        elif kind in ESCALATION_KINDS:
            key = (
                ESCALATION_KINDS[kind],
                str(payload.get("node")),
                scope_key(payload.get("scope")),
            )
            escalated = self.pending.get(key)
            if escalated is not None:
                note = {"to": payload.get("to"), "at": envelope.recorded_at, "seq": envelope.seq}
                self.pending[key] = {**escalated, "escalated": note}
            return
        elif kind == "SleepStarted":
            self.state = RunState.SLEEPING
            self.sleep = {"wake_at": payload.get("wake_at"), "node": payload.get("node")}
            return
        elif kind == "SleepCompleted":
            self.state = RunState.RUNNING
            self.sleep = None
            return
        elif kind in RESOLUTION_KINDS:
            pending_kind = PARKING_KINDS[RESOLUTION_KINDS[kind]][0]
            key = (pending_kind, str(payload.get("node")), scope_key(payload.get("scope")))
            self.pending.pop(key, None)
            if self.state in PARKED:
                waiting_for = _PENDING_KIND_OF[self.state]
                if not any(item["kind"] == waiting_for for item in self.pending.values()):
                    self.state = RunState.RUNNING
            return
        if kind != "GraphRunStarted" and self.state is RunState.QUEUED:
            self.state = RunState.RUNNING

    def pending_items(self) -> list[dict[str, Any]]:
        return sorted(self.pending.values(), key=lambda item: item["seq"])

    def status(self) -> dict[str, Any]:
        if self.terminal is not None:
            return dict(self.terminal)
        items = self.pending_items()
        state = self.state
        if state is RunState.SLEEPING and self.sleep is not None:
            return {"state": state.value, **self.sleep}
        if state not in PARKED:
            status: dict[str, Any] = {"state": state.value}
            if items:  # between a resolution and the parking that follows it
                status["pending"] = items
            return status
        waiting_for = _PENDING_KIND_OF[state]
        first = next((item for item in items if item["kind"] == waiting_for), items[0])
        status = {"state": state.value, "node": first["node"]}
        if state is RunState.SUSPENDED:
            status["reason"] = first.get("reason")
            status["input_schema"] = first.get("input_schema")
            if first.get("wait") == "signal":
                status["kind"] = "signal"
        elif state is RunState.BUDGET_EXCEEDED:
            status["budget"] = first.get("budget")
            status["observed"] = first.get("observed")
        else:
            status["tool"] = first.get("tool")
        status["pending"] = items
        return status


def run_status(events: Iterable[Envelope]) -> dict[str, Any]:
    """The status object of a run's log: ``{"state", …state fields}`` (spec 05)."""
    fold = StatusFold()
    for envelope in events:
        fold.feed(envelope)
    return fold.status()


def with_overdue(status: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A sleeping run's status as it is answered at ``now``: once ``now`` is past its
    ``wake_at``, also ``"overdue": true`` and ``overdue_seconds`` (whole seconds, rounded down);
    both or neither, never stored (spec 08, section 1). Any other status is returned as it is."""
    if status.get("state") != RunState.SLEEPING.value:
        return status
    wake_at = instant(status.get("wake_at"))
    if wake_at is None or now <= wake_at:
        return status
    return {**status, "overdue": True, "overdue_seconds": int((now - wake_at).total_seconds())}


def instant(text: Any) -> datetime | None:
    """An RFC 3339 instant (any fraction digits, ``Z`` or an offset) as a UTC datetime."""
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


def last_resolution(
    events: Sequence[Envelope], node: str | None = None
) -> tuple[str | None, str | None]:
    """Who resolved the latest parking (of ``node``, when given) and when: ``(by, at)``."""
    for envelope in reversed(events):
        if envelope.kind in RESOLUTION_KINDS and (
            node is None or envelope.payload.get("node") == node
        ):
            return envelope.payload.get("by"), envelope.recorded_at
    return None, None


def graph_projection(graph_hash: str, events: Iterable[Envelope]) -> dict[str, Any]:
    """``GET /v1/runs/{id}/graph``: one entry per top-level node the run reached (absent when
    not reached; skipped is not unreached), in the order reached. Events inside map items and
    fold passes (those with a ``scope``) belong to their owner and are not listed."""
    nodes: dict[str, dict[str, Any]] = {}
    current: str | None = None
    for envelope in events:
        payload = envelope.payload
        if payload.get("scope") or "node" not in payload:
            continue
        node_id = str(payload["node"])
        kind = envelope.kind
        if kind == "NodeEntered":
            nodes[node_id] = {"node": node_id, "state": "entered"}
            current = node_id
        elif kind == "NodeSkipped":
            nodes[node_id] = {"node": node_id, "state": "skipped", "reason": payload.get("reason")}
        elif node_id not in nodes:
            continue
        entry = nodes[node_id]
        if kind == "NodeExited":
            entry["state"] = "exited"
            if current == node_id:
                current = None
        elif kind == "BranchTaken":
            entry["branch_case"] = payload.get("case")
        elif kind == "MapFannedOut":
            entry["map"] = {"items": payload.get("items"), "iterations": []}
        elif kind == "MapIterationStarted" and "map" in entry:
            entry["map"]["iterations"].append(
                {
                    "index": payload.get("index"),
                    "child_run": payload.get("child_run"),
                    "joined": False,
                }
            )
        elif kind == "MapIterationJoined" and "map" in entry:
            for iteration in entry["map"]["iterations"]:
                if iteration["index"] == payload.get("index"):
                    iteration["joined"] = True
        elif kind == "FoldIterationStarted":
            entry.setdefault("fold", {"iterations": []})["iterations"].append(
                {"index": payload.get("index"), "joined": False}
            )
        elif kind == "FoldIterationJoined" and "fold" in entry:
            for iteration in entry["fold"]["iterations"]:
                if iteration["index"] == payload.get("index"):
                    iteration["joined"] = True
        elif kind == "FoldConverged":
            entry.setdefault("fold", {"iterations": []})["converged"] = {
                "winner_index": payload.get("winner_index"),
                "reason": payload.get("reason"),
            }
        elif kind in PARKING_KINDS:
            entry["parked"] = PARKING_KINDS[kind][0]
        elif kind in RESOLUTION_KINDS:
            entry.pop("parked", None)
    projection: dict[str, Any] = {"graph_hash": graph_hash}
    if current is not None:
        projection["current_node"] = current
    projection["nodes"] = list(nodes.values())
    return projection
