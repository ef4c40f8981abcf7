"""The run-state table applied to appends: which states an append moves a run through.

Every writer (the engine's drive, a resolution, an abandon, a worker recording a crash) hands
the store the events to append and the status after them. The store checks, before it writes
anything, that the events move the run only along the transitions of
:data:`~editor.engine.states.TRANSITIONS`, step by step:

* a terminal event (``RunCompleted``, ``RunFailed``, ``RunAbandoned``) ends the run in its state;
* a parking event (``Suspended``, ``BudgetExceeded``, ``ReconciliationNeeded``) parks a run that
  was running, and adds an item to a run that is parked already (it stays where it is);
* a resolution (``Resumed``, ``BudgetRaised``, ``Reconciled``) resolves a parked run: it goes
  back to ``running`` (the table's *resolved* edges), or stays parked when it is the append's
  last event and the status says so (other items of the same kind are still open);
* a vote (``ApprovalVoted``) or an escalation (``GateEscalated``) changes an open item: it leaves
  a parked run where it is, and is refused for any other;
* any other event is work: it is refused for a parked run (a parked run moves on only when it
  is resolved);
* a queued run's events, but for its abandonment or a failure recorded from outside, are
  written by its driver, which is running it: the run goes ``queued → running`` first (so a
  graph with nothing to walk completes ``queued → running → completed``);
* a fork's opening append (:mod:`editor.engine.forks`) is its ``GraphRunStarted`` (which
  records ``forked_from``) followed by its origin's events up to the node it starts from: the
  new run goes ``queued → running`` at the first replayed step, through every parking and
  resolution the replayed events hold, and ends ``running`` with nothing open (a fork starts
  at a node boundary, where the origin was running), waiting for a driver as a run whose
  drive was cut off does; a fork from the first node stays ``queued``;
* the states reached must end where the given status says.

Only the state before the append is needed (not the log), so the ORM store can turn the check
into the guard of its conditional ``UPDATE`` (:func:`allowed_sources`).
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.engine.errors import TransitionRefused
from editor.engine.states import PARKED, TERMINAL, TRANSITIONS, RunState
from editor.engine.status import ITEM_KINDS, PARKING_KINDS, RESOLUTION_KINDS

__all__ = ["allowed_sources", "check_append_states"]

#: The events a queued run can take from outside its drive; any other event is written by the
#: driver, which is running the run (``queued → running``) when it writes it.
_FROM_OUTSIDE = frozenset({"GraphRunStarted", "RunAbandoned", "RunFailed"})
_ENDS = {
    "RunCompleted": RunState.COMPLETED,
    "RunFailed": RunState.FAILED,
    "RunAbandoned": RunState.ABANDONED,
}


def _step(source: RunState, target: RunState) -> None:
    if source is target and source not in TERMINAL:
        return  # staying is not a transition
    if target not in TRANSITIONS[source]:
        raise TransitionRefused(source.value, target.value)


def check_append_states(current: str, kinds: Sequence[str], final: str) -> None:
    """Raise :class:`TransitionRefused` unless appending events of ``kinds`` to a run in state
    ``current`` moves it only along the table, and leaves it in state ``final``."""
    start = state = RunState(current)
    last = len(kinds) - 1
    for index, kind in enumerate(kinds):
        before = state
        if state is RunState.QUEUED and kind not in _FROM_OUTSIDE:
            state = RunState.RUNNING  # written by the driver, which is running the run
        if kind in _ENDS:
            target = _ENDS[kind]
        elif kind == "GraphRunStarted":
            target = RunState.QUEUED  # the log's first event (check_append keeps it there)
        elif kind == "SleepStarted":
            if state is not RunState.RUNNING:
                raise TransitionRefused(
                    state.value,
                    RunState.SLEEPING.value,
                    "a `SleepStarted` event puts a running run to sleep, and this one is not "
                    "running",
                )
            target = RunState.SLEEPING
        elif kind == "SleepCompleted":
            if state is not RunState.SLEEPING:
                raise TransitionRefused(
                    before.value,
                    RunState.RUNNING.value,
                    "a `SleepCompleted` event wakes a sleeping run, and this one is not asleep",
                )
            target = RunState.RUNNING
        elif kind in PARKING_KINDS:
            target = state if state in PARKED else PARKING_KINDS[kind][1]
        elif kind in RESOLUTION_KINDS:
            if state not in PARKED:
                raise TransitionRefused(
                    before.value,
                    RunState.RUNNING.value,
                    f"a `{kind}` event resolves a parked run, and this one waits for nothing",
                )
            target = state if index == last and final == state.value else RunState.RUNNING
        elif kind in ITEM_KINDS:
            if state not in PARKED:
                raise TransitionRefused(
                    before.value,
                    before.value,
                    f"a `{kind}` event changes an open gate, and this run waits for nothing",
                )
            target = state
        else:
            if state in PARKED or state is RunState.SLEEPING:
                raise TransitionRefused(
                    state.value,
                    RunState.RUNNING.value,
                    f"a `{kind}` event is work, and a parked run moves on only when it is resolved",
                )
            target = RunState.RUNNING
        _step(state, target)
        state = target
    if state.value != final:
        # The events do not lead where the status says: no path of the table does.
        raise TransitionRefused(start.value, str(final))


def allowed_sources(kinds: Sequence[str], final: str) -> frozenset[str]:
    """Every state from which appending events of ``kinds`` may leave a run in ``final``."""
    allowed = set()
    for source in RunState:
        try:
            check_append_states(source.value, kinds, final)
        except TransitionRefused:
            continue
        allowed.add(source.value)
    return frozenset(allowed)
