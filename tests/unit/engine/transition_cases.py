"""The cases of the run-state table's test: a log that leaves a run in each state, one payload
per event kind, and what the table says of each kind appended in each state. Shared by the
in-memory store's test and the ORM store's."""

from __future__ import annotations

from typing import Any

from editor.engine import (
    EVENT_FIELDS,
    PARKED,
    TERMINAL,
    TRANSITIONS,
    AppendRefused,
    RunLost,
    RunState,
    TransitionRefused,
)

__all__ = ["AT", "KINDS", "LOGS", "PAYLOADS", "expected"]

AT = "2026-01-01T00:00:00.000000Z"
RESOLUTIONS = {"Resumed", "BudgetRaised", "Reconciled"}
#: A vote of a gate that needs several approvals, or an escalation of a gate past its due time:
#: each leaves a parked run where it is.
VOTES = {"ApprovalVoted", "GateEscalated"}
WORK_FREE = RESOLUTIONS | VOTES | {"Suspended", "BudgetExceeded", "ReconciliationNeeded"}
WORK_FREE |= {"RunCompleted", "RunFailed", "RunAbandoned", "GraphRunStarted", "SleepCompleted"}

#: A log that leaves a run in each state.
LOGS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "queued": [],
    "running": [("NodeEntered", {"node": "a"})],
    "suspended": [
        ("NodeEntered", {"node": "g"}),
        ("Suspended", {"node": "g", "reason": "r", "input_schema": {}, "value": 1}),
    ],
    "budget_exceeded": [
        ("NodeEntered", {"node": "a"}),
        ("BudgetExceeded", {"node": "a", "budget": {"kind": "steps", "limit": 1}, "observed": 1}),
    ],
    "needs_reconciliation": [
        ("NodeEntered", {"node": "t"}),
        ("ToolCallRequested", {"node": "t", "tool": "w", "input": 1, "call": 0}),
        ("ReconciliationNeeded", {"node": "t", "tool": "w", "call": 0, "input": 1}),
    ],
    "sleeping": [
        ("NodeEntered", {"node": "d"}),
        ("NowObserved", {"now": AT}),
        ("SleepStarted", {"wake_at": AT, "node": "d"}),
    ],
    "completed": [("NodeEntered", {"node": "a"}), ("RunCompleted", {"output": 1})],
    "failed": [("NodeEntered", {"node": "a"}), ("RunFailed", {"error": "boom"})],
    "abandoned": [("NodeEntered", {"node": "a"}), ("RunAbandoned", {"by": "carol"})],
}

#: One payload per event kind; a resolution resolves the item its state's log opened.
PAYLOADS: dict[str, dict[str, Any]] = {
    "GraphRunStarted": {"graph_hash": "g", "input": None},
    "Suspended": {"node": "g2", "reason": "r", "input_schema": {}, "value": 1},
    "Resumed": {"node": "g", "input": 1, "by": "bob", "schema_hash": "h"},
    "ApprovalVoted": {"node": "g", "input": 1, "by": "amy", "schema_hash": "h", "quorum": 2},
    "GateEscalated": {"node": "g", "to": {"groups": ["desk"], "users": []}, "by": "the deadline"},
    "BudgetExceeded": {"node": "a2", "budget": {"kind": "steps", "limit": 1}, "observed": 1},
    "BudgetRaised": {"node": "a", "kind": "steps", "limit": 2, "by": "bob"},
    "ReconciliationNeeded": {"node": "t2", "tool": "w", "call": 0, "input": 1},
    "Reconciled": {"node": "t", "call": 0, "by": "bob", "output": 1},
    "NowObserved": {"now": AT},
    "SleepStarted": {"wake_at": AT, "node": "d2"},
    "SleepCompleted": {"node": "d"},
    "RunCompleted": {"output": 1},
    "RunFailed": {"error": "boom"},
    "RunAbandoned": {"by": "carol"},
    "SomethingNewer": {"node": "a"},  # a kind a newer version might write
}
KINDS = sorted({*EVENT_FIELDS, "SomethingNewer"})


def expected(state: str, kind: str, target: str) -> type[Exception] | None:
    """What the table (and its annotations) says of ``kind`` appended to a run in ``state``."""
    if kind == "GraphRunStarted":
        return AppendRefused  # it opens a log
    if RunState(state) in TERMINAL:
        return RunLost  # nothing follows the end of a run
    if state == "queued" and kind not in ("RunAbandoned", "RunFailed"):
        state = "running"  # any other event is its driver's, which is running it
    if kind == "SleepCompleted" and state != "sleeping":
        return TransitionRefused  # nothing sleeps
    if kind not in WORK_FREE and state == "sleeping":
        return TransitionRefused  # a sleeping run moves on only when it wakes
    if kind in RESOLUTIONS and RunState(state) not in PARKED:
        return TransitionRefused  # nothing waits for a resolution
    if kind in VOTES and RunState(state) not in PARKED:
        return TransitionRefused  # nothing waits for a vote
    if kind not in WORK_FREE and RunState(state) in PARKED:
        return TransitionRefused  # a parked run moves on only when it is resolved
    if target == state or RunState(target) in TRANSITIONS[RunState(state)]:
        return None
    return TransitionRefused
