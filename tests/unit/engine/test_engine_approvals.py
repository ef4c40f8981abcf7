"""Approval policies in the engine (issue 26): the strict reader of a gate's policy, the record a
run keeps of it, and a quorum's votes (``ApprovalVoted``) folded, guarded by the state table,
and resolved by the last approval or the first rejection."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine import AlreadyVoted, InvalidResumeInput, prepare_decision, run_status
from editor.engine.approvals import (
    LEGACY,
    Expiry,
    GatePolicy,
    RunPolicy,
    format_due,
    gate_nodes,
    gate_policy_of,
    read_gate,
)
from editor.engine.errors import TransitionRefused
from editor.engine.events import unmodeled_fields
from editor.engine.transitions import check_append_states
from editor.graph.model import GateNode, MapNode, SubgraphBody, ToolNode
from tests.unit.engine.harness import Harness, graph, now

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "note": {"type": "string"}},
    "required": ["ok"],
}


def gated() -> Any:
    return graph(
        GateNode("g", approval_schema=SCHEMA),
        ToolNode("after", "echo"),
        edges=[("g", "after")],
    )


def decide(h: Harness, run_id: str, value: Any, by: str, quorum: int = 2) -> list[Any]:
    record = h.store.load_run(run_id)
    events, status = prepare_decision(
        record, {"input": value}, by, now(), quorum=quorum, decision_key="ok"
    )
    h.store.record(run_id, events, status)
    return events


# --- Reading a gate's policy ------------------------------------------------------------------


def test_a_gate_left_empty_keeps_the_base_and_every_field_reads_back_as_the_api_writes_it() -> None:
    body = {
        "deciders": {"groups": ["finance", "finance"], "users": [" ada "]},
        "four_eyes": False,
        "quorum": 3,
        "due": "1h 30m",
        "remind_at": "75 %",
        "on_expiry": {"resolve_with": {"ok": False}},
    }

    empty, none = read_gate("g", {}, GatePolicy())
    full, problems = read_gate("g", body, GatePolicy(), schema=SCHEMA, check_value=True)

    assert (empty, none) == (GatePolicy(), [])
    assert problems == []
    assert full is not None
    assert full.as_json() == {
        "deciders": {"groups": ["finance"], "users": ["ada"]},
        "four_eyes": False,
        "quorum": 3,
        "due": "1h30m",
        "remind_at": "75%",
        "on_expiry": {"resolve_with": {"ok": False}},
    }
    assert read_gate("g", full.as_json(), GatePolicy()) == (full, [])


def test_every_problem_of_a_gate_is_collected_each_naming_its_field() -> None:
    body = {"quorum": 9, "four_eyes": 1, "due": "later", "remind_at": "80%", "extra": 1}

    policy, problems = read_gate("g", body, GatePolicy())

    assert policy is None
    assert [(problem.gate, problem.field) for problem in problems] == [
        ("g", "extra"),
        ("g", "four_eyes"),
        ("g", "quorum"),
        ("g", "due"),
    ]


def test_a_value_to_resolve_with_is_checked_only_when_asked() -> None:
    body = {"due": "1d", "on_expiry": {"resolve_with": {"ok": "yes"}}}

    _, checked = read_gate("g", body, GatePolicy(), schema=SCHEMA, check_value=True)
    unchecked, none = read_gate("g", body, GatePolicy())

    assert [problem.field for problem in checked] == ["on_expiry.resolve_with"]
    assert "$.ok" in checked[0].message
    assert none == [] and unchecked is not None
    assert unchecked.on_expiry == Expiry("resolve", value={"ok": "yes"})


@pytest.mark.parametrize(
    ("seconds", "text"), [(1, "1s"), (90, "1m30s"), (86400, "1d"), (90061, "1d1h1m1s")]
)
def test_a_due_time_is_written_in_its_largest_units(seconds: int, text: str) -> None:
    assert format_due(seconds) == text
    assert read_gate("g", {"due": text}, GatePolicy())[0] == GatePolicy(due=seconds)


def test_the_gates_of_a_graph_include_those_of_embedded_subgraphs() -> None:
    inner = graph(GateNode("inner", approval_schema=True))
    document = graph(
        GateNode("top", approval_schema=True),
        MapNode("each", over="$.input", concurrency=1, body=SubgraphBody(inner)),
    )

    assert list(gate_nodes(document)) == ["top", "inner"]


def test_a_run_recorded_without_a_policy_keeps_the_approvers_rule_and_one_with_reads_its_gate() -> (
    None
):
    recorded = RunPolicy(
        gates={"g": GatePolicy(groups=("finance",), quorum=2)}, authors=("ada",), document="d"
    ).as_record()

    assert gate_policy_of(None, "g") == LEGACY
    assert LEGACY.four_eyes is False and LEGACY.role_decides
    assert gate_policy_of(recorded, "g") == GatePolicy(groups=("finance",), quorum=2)
    assert RunPolicy.from_record(recorded) == RunPolicy(
        gates={"g": GatePolicy(groups=("finance",), quorum=2)}, authors=("ada",), document="d"
    )


# --- Votes ------------------------------------------------------------------------------------


def test_an_approval_short_of_the_quorum_is_a_vote_and_the_run_stays_suspended(
    h: Harness,
) -> None:
    run_id = h.run(gated(), {"draft": "d"})

    [vote] = decide(h, run_id, {"ok": True}, "amy")

    assert vote.kind == "ApprovalVoted"
    assert unmodeled_fields(vote) == []
    assert vote.payload["by"] == "amy" and vote.payload["quorum"] == 2
    status = h.store.status(run_id)
    assert status["state"] == "suspended"
    assert [entry["by"] for entry in status["pending"][0]["votes"]] == ["amy"]
    assert h.drive(run_id) == "suspended"  # a vote moves nothing


def test_the_last_approval_resolves_the_gate_with_its_answer_and_the_earlier_votes(
    h: Harness,
) -> None:
    run_id = h.run(gated(), {"draft": "d"})
    [vote] = decide(h, run_id, {"ok": True, "note": "first"}, "amy")

    [resumed] = decide(h, run_id, {"ok": True, "note": "second"}, "ben")

    assert resumed.kind == "Resumed"
    assert unmodeled_fields(resumed) == []
    assert resumed.payload["input"] == {"ok": True, "note": "second"}
    assert resumed.payload["votes"] == [{"by": "amy", "at": vote.recorded_at, "seq": vote.seq}]
    assert resumed.payload["quorum"] == 2
    assert h.drive(run_id) == "completed"


def test_a_rejection_resolves_at_once_whatever_the_quorum(h: Harness) -> None:
    run_id = h.run(gated(), {"draft": "d"})

    [resumed] = decide(h, run_id, {"ok": False}, "amy", quorum=5)

    assert resumed.kind == "Resumed"
    assert "votes" not in resumed.payload
    assert h.store.status(run_id)["state"] == "running"


def test_a_second_answer_from_one_person_is_refused_before_its_input_is_read(h: Harness) -> None:
    run_id = h.run(gated(), {"draft": "d"})
    decide(h, run_id, {"ok": True}, "amy")
    count = len(h.kinds(run_id))

    with pytest.raises(AlreadyVoted) as refused:
        decide(h, run_id, "not even an object", "amy")

    assert refused.value.by == "amy"
    assert len(h.kinds(run_id)) == count


def test_a_vote_is_checked_against_the_gates_schema(h: Harness) -> None:
    run_id = h.run(gated(), {"draft": "d"})

    with pytest.raises(InvalidResumeInput):
        decide(h, run_id, {"ok": "yes"}, "amy")


def test_without_an_approve_reject_boolean_every_answer_approves() -> None:
    h = Harness()
    run_id = h.run(
        graph(
            GateNode("g", approval_schema={"type": "string"}),
            ToolNode("after", "echo"),
            edges=[("g", "after")],
        ),
        1,
    )
    record = h.store.load_run(run_id)

    events, status = prepare_decision(
        record, {"input": "no"}, "amy", now(), quorum=2, decision_key=None
    )

    assert [event.kind for event in events] == ["ApprovalVoted"]
    assert status["state"] == "suspended"


def test_a_vote_keeps_a_parked_run_where_it_is_and_is_refused_for_any_other() -> None:
    check_append_states("suspended", ["ApprovalVoted"], "suspended")
    check_append_states("budget_exceeded", ["ApprovalVoted"], "budget_exceeded")
    for state in ("queued", "running", "completed", "sleeping"):
        with pytest.raises(TransitionRefused):
            check_append_states(state, ["ApprovalVoted"], state)


def test_an_item_parked_again_keeps_its_votes(h: Harness) -> None:
    run_id = h.run(gated(), {"draft": "d"})
    decide(h, run_id, {"ok": True}, "amy")
    record = h.store.load_run(run_id)
    suspended = next(event for event in record.events if event.kind == "Suspended")
    again = type(suspended)(
        run_id, len(record.events), suspended.recorded_at, "Suspended", dict(suspended.payload)
    )

    status = run_status([*record.events, again])

    assert [vote["by"] for vote in status["pending"][0]["votes"]] == ["amy"]
