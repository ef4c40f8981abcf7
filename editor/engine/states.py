"""Run states and the transitions between them (spec 04, *Run states*).

This table is the one place the transitions live: the engine and the services check it,
and ``docs/engine.md``'s table is generated from it (``python -m editor.engine.states``).
"""

from __future__ import annotations

from enum import StrEnum

from editor.engine.errors import TransitionRefused

__all__ = ["PARKED", "TERMINAL", "TRANSITIONS", "RunState", "check_transition", "markdown_table"]


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUSPENDED = "suspended"
    SLEEPING = "sleeping"
    BUDGET_EXCEEDED = "budget_exceeded"
    NEEDS_RECONCILIATION = "needs_reconciliation"
    COMPLETED = "completed"
    FAILED = "failed"
    ABANDONED = "abandoned"


S = RunState
TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    S.QUEUED: frozenset({S.RUNNING, S.ABANDONED, S.FAILED}),
    S.RUNNING: frozenset(
        {
            S.SUSPENDED,
            S.SLEEPING,
            S.BUDGET_EXCEEDED,
            S.NEEDS_RECONCILIATION,
            S.COMPLETED,
            S.FAILED,
            S.ABANDONED,
        }
    ),
    S.SUSPENDED: frozenset({S.RUNNING, S.ABANDONED}),
    # Woken at its wake_at (or by an operator), abandoned, or failed when it wakes and its
    # graph no longer resolves (spec 08, section 1).
    S.SLEEPING: frozenset({S.RUNNING, S.ABANDONED, S.FAILED}),
    S.BUDGET_EXCEEDED: frozenset({S.RUNNING, S.ABANDONED, S.FAILED}),
    S.NEEDS_RECONCILIATION: frozenset({S.RUNNING, S.ABANDONED, S.FAILED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.ABANDONED: frozenset(),
}
del S

TERMINAL = frozenset(state for state, targets in TRANSITIONS.items() if not targets)
PARKED = frozenset({RunState.SUSPENDED, RunState.BUDGET_EXCEEDED, RunState.NEEDS_RECONCILIATION})


def check_transition(current: str, target: str) -> None:
    """Raise :class:`TransitionRefused` unless ``current`` → ``target`` is in the table.

    Staying in ``running`` is allowed (a run appends many events while running)."""
    source, destination = RunState(current), RunState(target)
    if source is destination is RunState.RUNNING:
        return
    if destination not in TRANSITIONS[source]:
        raise TransitionRefused(source.value, destination.value)


def markdown_table() -> str:
    """The transition table as Markdown, for the docs."""
    lines = ["| from | to |", "|---|---|"]
    for source, targets in TRANSITIONS.items():
        ordered = [state for state in RunState if state in targets]
        to = ", ".join(f"`{state.value}`" for state in ordered) or "— (terminal)"
        lines.append(f"| `{source.value}` | {to} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a docs helper
    print(markdown_table())
