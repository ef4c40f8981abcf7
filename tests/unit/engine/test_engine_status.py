"""The log's readers: the status fold, the canvas projection, the append guard, the audit and
the run-state table (spec 04, *Run states* and *Events*; spec 05)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from editor.engine import (
    EVENT_FIELDS,
    PARKED,
    TERMINAL,
    TERMINAL_KINDS,
    TRANSITIONS,
    AppendRefused,
    Envelope,
    RunState,
    TransitionRefused,
    audit,
    check_append,
    check_transition,
    envelope_from_json,
    graph_projection,
    prepare_abandon,
    run_status,
)
from editor.engine.states import markdown_table
from editor.graph import hash_value
from editor.graph.model import (
    AgentNode,
    BranchCase,
    BranchNode,
    ExpressionCondition,
    FoldNode,
    GateNode,
    JoinLast,
    MapNode,
    NodeBody,
    ToolNode,
)
from tests.unit.engine.harness import Harness, graph, now

SKIP = "no live inbound edge: an upstream branch routed to another case"


def env(seq: int, kind: str, /, run_id: str = "r", version: int = 1, **payload: Any) -> Envelope:
    return Envelope(run_id, seq, "2026-01-01T00:00:00.000000Z", kind, payload, version)


# --- run states -------------------------------------------------------------------------

ALLOWED = {
    ("queued", "running"),
    ("queued", "abandoned"),
    ("queued", "failed"),
    ("running", "suspended"),
    ("running", "budget_exceeded"),
    ("running", "needs_reconciliation"),
    ("running", "completed"),
    ("running", "failed"),
    ("running", "abandoned"),
    ("suspended", "running"),
    ("suspended", "abandoned"),
    ("budget_exceeded", "running"),
    ("budget_exceeded", "abandoned"),
    ("budget_exceeded", "failed"),
    ("needs_reconciliation", "running"),
    ("needs_reconciliation", "abandoned"),
    ("needs_reconciliation", "failed"),
    # spec 08: a delay's wait
    ("running", "sleeping"),
    ("sleeping", "running"),
    ("sleeping", "abandoned"),
    ("sleeping", "failed"),
}


def test_the_transition_table_is_spec_04s_with_spec_08s_sleeping() -> None:
    table = {(a.value, b.value) for a, targets in TRANSITIONS.items() for b in targets}
    assert table == ALLOWED
    assert {state.value for state in TERMINAL} == {"completed", "failed", "abandoned"}
    assert {state.value for state in PARKED} == {
        "suspended",
        "budget_exceeded",
        "needs_reconciliation",
    }


@pytest.mark.parametrize("source", [state.value for state in RunState])
@pytest.mark.parametrize("target", [state.value for state in RunState])
def test_check_transition_refuses_everything_else(source: str, target: str) -> None:
    if (source, target) in ALLOWED or source == target == "running":
        check_transition(source, target)
        return
    with pytest.raises(TransitionRefused) as raised:
        check_transition(source, target)
    assert str(raised.value) == f"a run cannot go from `{source}` to `{target}`"
    assert (raised.value.current, raised.value.target) == (source, target)


def test_the_docs_table_is_generated_from_the_code() -> None:
    lines = markdown_table().splitlines()
    assert lines[:2] == ["| from | to |", "|---|---|"]
    assert "| `queued` | `running`, `failed`, `abandoned` |" in lines
    assert "| `completed` | — (terminal) |" in lines
    assert len(lines) == 2 + len(RunState)


def test_a_finished_run_cannot_be_abandoned(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "echo")))
    with pytest.raises(TransitionRefused):
        prepare_abandon(h.store.load_run(run_id), None, "carol", now())


def test_a_queued_run_can_be_abandoned_and_is_then_not_driven(h: Harness) -> None:
    run_id = h.start(graph(ToolNode("t", "echo")))
    assert h.state(run_id) == "queued"
    h.abandon(run_id, reason=None)
    assert h.last(run_id) == ("RunAbandoned", {"by": "carol"})
    assert h.drive(run_id) == "abandoned"
    assert h.kinds(run_id) == ["GraphRunStarted", "RunAbandoned"]


# --- the status fold --------------------------------------------------------------------


def test_the_status_of_a_log() -> None:
    assert run_status([env(0, "GraphRunStarted", graph_hash="g", input=1)]) == {"state": "queued"}
    log = [env(0, "GraphRunStarted", graph_hash="g", input=1), env(1, "NodeEntered", node="a")]
    assert run_status(log) == {"state": "running"}
    assert run_status([*log, env(2, "RunCompleted", output=[1])]) == {
        "state": "completed",
        "output": [1],
    }
    assert run_status([*log, env(2, "RunFailed", error="boom", code="x")]) == {
        "state": "failed",
        "error": "boom",
        "code": "x",
    }
    assert run_status([*log, env(2, "RunAbandoned", by="c")]) == {"state": "abandoned"}


def test_a_run_with_several_pending_items_is_parked_on_the_oldest() -> None:
    log = [
        env(0, "GraphRunStarted", graph_hash="g", input=1),
        env(
            1,
            "BudgetExceeded",
            node="a",
            scope=[["m", 0]],
            budget={"kind": "steps", "limit": 1},
            observed=1,
        ),
        env(
            2,
            "BudgetExceeded",
            node="a",
            scope=[["m", 1]],
            budget={"kind": "steps", "limit": 1},
            observed=1,
        ),
    ]
    status = run_status(log)
    assert status["state"] == "budget_exceeded"
    assert [item["scope"] for item in status["pending"]] == [[["m", 0]], [["m", 1]]]
    resolved = [
        *log,
        env(3, "BudgetRaised", node="a", scope=[["m", 0]], kind="steps", limit=5, by="b"),
    ]
    assert [item["scope"] for item in run_status(resolved)["pending"]] == [[["m", 1]]]
    both = [
        *resolved,
        env(4, "BudgetRaised", node="a", scope=[["m", 1]], kind="steps", limit=5, by="b"),
    ]
    assert run_status(both) == {"state": "running"}


def test_budgets_inside_a_map_park_every_item_and_resolve_one_by_one(h: Harness) -> None:
    reply = '{"tool_calls": [{"name": "echo", "arguments": {}}]}'
    agent = h.scripted(reply, '"done"', tools=["echo"], budget={"max_steps": 1})
    document = graph(
        MapNode("m", over="items", concurrency=2, body=NodeBody("a")), AgentNode("a", agent)
    )
    run_id = h.run(document, {"items": [1, 2]})
    status = h.store.status(run_id)
    assert status["state"] == "budget_exceeded"
    assert sorted(item["scope"][0][1] for item in status["pending"]) == [0, 1]
    # the parking events come last: nothing is appended after them
    assert h.kinds(run_id)[-2:] == ["BudgetExceeded", "BudgetExceeded"]
    h.resume(run_id, {"limit": 2}, node="a", scope=[["m", 1]])
    assert h.state(run_id) == "budget_exceeded"
    assert h.drive(run_id) == "budget_exceeded"  # one item still waits
    h.resume(run_id, {"limit": 2})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == ["done", "done"]


# --- the canvas projection ----------------------------------------------------------------


def test_the_projection_of_a_finished_run(h: Harness) -> None:
    document = graph(
        BranchNode(
            "b",
            (
                BranchCase("many", ExpressionCondition("n > 1")),
                BranchCase("few", ExpressionCondition("n <= 1")),
            ),
        ),
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")),
        ToolNode("each", "echo"),
        ToolNode("skip", "echo"),
        FoldNode(
            "f", body=NodeBody("each2"), max_iterations=2, stop_when="x == 1", join=JoinLast()
        ),
        ToolNode("each2", "echo"),
        edges=[("b", "m", "many"), ("b", "skip", "few"), ("m", "f")],
    )
    run_id = h.run(document, {"n": 2, "items": ["p", "q"]})
    graph_hash = h.store.runs[run_id]["graph_hash"]
    projection = graph_projection(graph_hash, h.store.events[run_id])

    def child(index: int) -> str:
        return hash_value({"parent_run": run_id, "node": "m", "index": index})

    assert projection == {
        "graph_hash": graph_hash,
        "nodes": [
            {"node": "b", "state": "exited", "branch_case": "many"},
            {
                "node": "m",
                "state": "exited",
                "map": {
                    "items": 2,
                    "iterations": [
                        {"index": 0, "child_run": child(0), "joined": True},
                        {"index": 1, "child_run": child(1), "joined": True},
                    ],
                },
            },
            {
                "node": "f",
                "state": "exited",
                "fold": {
                    "iterations": [{"index": 0, "joined": True}, {"index": 1, "joined": True}],
                    "converged": {"winner_index": 1, "reason": "bound"},
                },
            },
            {"node": "skip", "state": "skipped", "reason": SKIP},
        ],
    }


def test_the_projection_of_a_parked_run_has_a_current_node(h: Harness) -> None:
    document = graph(
        ToolNode("a", "echo"),
        GateNode("g", approval_schema={}),
        ToolNode("z", "echo"),
        edges=[("a", "g"), ("g", "z")],
    )
    run_id = h.run(document, 1)
    projection = graph_projection("sha256:x", h.store.events[run_id])
    assert projection == {
        "graph_hash": "sha256:x",
        "current_node": "g",
        "nodes": [
            {"node": "a", "state": "exited"},
            {"node": "g", "state": "entered", "parked": "gate"},
        ],
    }
    h.resume(run_id, {})
    h.drive(run_id)
    projection = graph_projection("sha256:x", h.store.events[run_id])
    assert "current_node" not in projection
    assert [(n["node"], n["state"]) for n in projection["nodes"]] == [
        ("a", "exited"),
        ("g", "exited"),
        ("z", "exited"),
    ]


# --- the append guard --------------------------------------------------------------------


def test_check_append_accepts_a_continuation() -> None:
    check_append(0, None, [env(0, "GraphRunStarted", graph_hash="g", input=None)])
    check_append(
        3, "NodeExited", [env(3, "NodeEntered", node="a"), env(4, "RunCompleted", output=1)]
    )


@pytest.mark.parametrize(
    ("count", "last", "events", "message"),
    [
        (
            2,
            "NodeEntered",
            [env(3, "NodeExited", node="a")],
            "event seq 3 does not continue the log at 2",
        ),
        (
            2,
            "NodeEntered",
            [env(1, "NodeExited", node="a")],
            "event seq 1 does not continue the log at 2",
        ),
        (
            2,
            "NodeEntered",
            [env(2, "NodeExited", node="a"), env(2, "RunCompleted")],
            "event seq 2 does not continue the log at 3",
        ),
        (
            2,
            "NodeEntered",
            [env(2, "NodeExited", version=2, node="a")],
            "event 2 has schema_version 2; only 1 is written",
        ),
        (
            2,
            "NodeEntered",
            [env(2, "NodeExited", version=0)],
            "event 2 has schema_version 0; only 1 is written",
        ),
        (
            2,
            "NodeEntered",
            [env(2, "NodeExited"), env(3, "NodeExited", run_id="other")],
            "event 3 belongs to another run",
        ),
        (
            5,
            "RunCompleted",
            [env(5, "NodeEntered")],
            "the run ended with RunCompleted; nothing can follow it",
        ),
        (
            5,
            "RunFailed",
            [env(5, "RunAbandoned")],
            "the run ended with RunFailed; nothing can follow it",
        ),
        (
            2,
            "NodeEntered",
            [env(2, "RunAbandoned"), env(3, "NodeEntered")],
            "the run ended with RunAbandoned; nothing can follow it",
        ),
        (0, None, [env(0, "NodeEntered")], "a run's log opens with GraphRunStarted"),
        (
            1,
            "GraphRunStarted",
            [env(1, "GraphRunStarted")],
            "GraphRunStarted opens a log; it cannot follow other events",
        ),
        (1, "GraphRunStarted", [], "nothing to append"),
    ],
)
def test_check_append_refuses(count: int, last: str | None, events: list, message: str) -> None:
    with pytest.raises(AppendRefused, match=f"^{re.escape(message)}$"):
        check_append(count, last, events)


def test_the_terminal_kinds() -> None:
    assert {"RunCompleted", "RunFailed", "RunAbandoned"} == TERMINAL_KINDS


def test_the_store_refuses_a_strict_violation_without_writing(h: Harness) -> None:
    run_id = h.start(graph())
    with pytest.raises(AppendRefused):
        h.store.record(
            run_id, [env(1, "NodeEntered", run_id=run_id, version=2)], {"state": "running"}
        )
    assert h.kinds(run_id) == ["GraphRunStarted"]


# --- the forward-tolerant reader and the audit ---------------------------------------------


def test_an_envelope_round_trips_and_keeps_unknown_fields() -> None:
    value = {
        "run_id": "r",
        "seq": 4,
        "schema_version": 1,
        "recorded_at": "2026-01-01T00:00:00.000000Z",
        "event": {"kind": "NodeEntered", "payload": {"node": "a", "colour": "red"}},
    }
    envelope = envelope_from_json(value)
    assert envelope.payload == {"node": "a", "colour": "red"}
    assert envelope.as_json() == value
    unknown = envelope_from_json({**value, "event": {"kind": "Teleported", "payload": {"to": 1}}})
    assert (unknown.kind, unknown.payload) == ("Teleported", {"to": 1})


def test_the_audit_counts_unknown_kinds_and_unmodeled_fields() -> None:
    events = [
        env(0, "GraphRunStarted", graph_hash="g", input=None),
        env(1, "Teleported", to=1),
        env(2, "Teleported"),
        env(3, "NodeEntered", node="a", colour="red"),
        env(4, "NodeExited", node="a", output=1, colour="blue", size=2),
        env(5, "RunCompleted", output=1),
    ]
    report = audit(events)
    assert report.events == 6
    assert dict(report.unknown_kinds) == {"Teleported": 2}
    assert dict(report.unmodeled) == {
        ("NodeEntered", "colour"): 1,
        ("NodeExited", "colour"): 1,
        ("NodeExited", "size"): 1,
    }
    assert not report.clean
    assert audit(events[:1]).clean


def test_every_event_the_engine_writes_is_modeled(h: Harness) -> None:
    """A run touching every kind of node leaves a clean audit."""
    agent = h.scripted('{"tool_calls": [{"name": "echo", "arguments": {}}]}', '"x"', tools=["echo"])
    document = graph(
        AgentNode("a", agent),
        GateNode("g", approval_schema={}),
        MapNode("m", over="items", concurrency=2, body=NodeBody("each")),
        ToolNode("each", "echo"),
        FoldNode(
            "f", body=NodeBody("each2"), max_iterations=2, stop_when="x == 1", join=JoinLast()
        ),
        ToolNode("each2", "echo"),
        edges=[("a", "g"), ("g", "m"), ("m", "f")],
    )
    run_id = h.run(document)
    h.resume(run_id, {"items": [1]}, comment="go")
    h.drive(run_id)
    assert h.state(run_id) == "completed"
    assert audit(h.store.events[run_id]).clean
    assert set(h.kinds(run_id)) <= set(EVENT_FIELDS)


def test_recorded_at_is_rfc3339_utc_with_microseconds(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "echo")))
    for envelope in h.store.events[run_id]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", envelope.recorded_at)
    assert [e.seq for e in h.store.events[run_id]] == list(range(len(h.kinds(run_id))))
    assert {e.schema_version for e in h.store.events[run_id]} == {1}
