"""The run-state table is the law on every append (spec 04, *Run states*): the store refuses,
and writes nothing, when an append would move a run along a transition the table forbids."""

from __future__ import annotations

import json

import pytest

from editor.engine import (
    Envelope,
    InMemoryStore,
    RunState,
    TransitionRefused,
    run_status,
)
from editor.graph.model import (
    AgentNode,
    BranchCase,
    BranchNode,
    ExpressionCondition,
    GateNode,
    MapNode,
    SubgraphBody,
)
from tests.unit.engine.harness import Harness, graph
from tests.unit.engine.transition_cases import AT, KINDS, LOGS, PAYLOADS, expected


def store_in(state: str) -> tuple[InMemoryStore, str]:
    store = InMemoryStore()
    run_id = store.start("sha256:" + "0" * 64, None)
    events = [
        Envelope(run_id, 1 + offset, AT, kind, payload)
        for offset, (kind, payload) in enumerate(LOGS[state])
    ]
    if events:
        store.events[run_id].extend(events)
        store.runs[run_id]["status"] = run_status(store.events[run_id])
    assert store.status(run_id)["state"] == state
    return store, run_id


@pytest.mark.parametrize("state", [state.value for state in RunState])
@pytest.mark.parametrize("kind", KINDS)
def test_every_event_kind_in_every_state_follows_the_table(state: str, kind: str) -> None:
    store, run_id = store_in(state)
    before = list(store.events[run_id]), dict(store.status(run_id))
    payload = PAYLOADS.get(kind, {"node": "a"})
    envelope = Envelope(run_id, len(before[0]), AT, kind, payload)
    status = run_status([*before[0], envelope])
    refusal = expected(state, kind, status["state"])

    if refusal is None:
        store.append(run_id, [envelope], status)
        assert store.status(run_id) == status
        return
    with pytest.raises(refusal) as raised:
        store.append(run_id, [envelope], status)
    assert (list(store.events[run_id]), store.status(run_id)) == before  # nothing written
    if refusal is TransitionRefused:
        assert str(raised.value).startswith(f"a run cannot go from `{state}` to ")


def test_a_status_that_jumps_between_parked_states_is_refused_and_nothing_is_written() -> None:
    store, run_id = store_in("suspended")
    log = store.events[run_id]
    budget = Envelope(run_id, len(log), AT, "BudgetExceeded", PAYLOADS["BudgetExceeded"])
    store.events[run_id].append(budget)
    store.runs[run_id]["status"] = run_status(store.events[run_id])
    before = list(store.events[run_id])
    resumed = Envelope(run_id, len(before), AT, "Resumed", PAYLOADS["Resumed"])
    jump = {"state": "budget_exceeded", "node": "a2"}

    with pytest.raises(TransitionRefused) as raised:
        store.append(run_id, [resumed], jump)

    assert str(raised.value) == "a run cannot go from `suspended` to `budget_exceeded`"
    assert store.events[run_id] == before
    assert store.status(run_id)["state"] == "suspended"


def test_resolving_one_of_several_items_moves_the_run_only_along_the_table(h: Harness) -> None:
    """Found: resolving a gate of a map whose other item waited for a budget moved the run
    from `suspended` straight to `budget_exceeded`, which the table forbids."""
    tool_call = json.dumps({"tool_calls": [{"name": "echo", "arguments": {}}]})
    agent = h.scripted(tool_call, '"done"', tools=["echo"], budget={"max_steps": 1})
    body = graph(
        BranchNode(
            "route",
            cases=(
                BranchCase("gate", ExpressionCondition('kind == "gate"')),
                BranchCase("agent", ExpressionCondition('kind == "agent"')),
            ),
        ),
        GateNode("g", approval_schema={"type": "string"}),
        AgentNode("a", agent),
        edges=[("route", "g", "gate"), ("route", "a", "agent")],
    )
    document = graph(MapNode("m", over="items", concurrency=2, body=SubgraphBody(body)))
    run_id = h.run(document, {"items": [{"kind": "gate"}, {"kind": "agent"}]})
    status = h.store.status(run_id)
    assert status["state"] == "suspended"
    assert [item["kind"] for item in status["pending"]] == ["gate", "budget"]
    parked_budget = h.store.events[run_id][-1]
    assert parked_budget.kind == "BudgetExceeded"

    h.resume(run_id, "approved", node="g", scope=[["m", 0]])

    # suspended → running (resolved) → budget_exceeded (the item still open parks it again)
    log = h.store.events[run_id]
    assert [envelope.kind for envelope in log[-2:]] == ["Resumed", "BudgetExceeded"]
    assert log[-1].payload == parked_budget.payload
    assert run_status(log[:-1])["state"] == "running"
    status = h.store.status(run_id)
    assert status["state"] == "budget_exceeded"
    # the open item keeps its place: when it was first recorded
    assert [(item["kind"], item["seq"]) for item in status["pending"]] == [
        ("budget", parked_budget.seq)
    ]
    assert h.drive(run_id) == "budget_exceeded"  # it still waits for its budget
    h.resume(run_id, {"limit": 2})
    assert h.drive(run_id) == "completed"
    # each item's output is the last its body walked (`g` after `a`, by id)
    assert h.output(run_id) == ["approved", "done"]
