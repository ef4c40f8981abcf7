"""The templates run end to end (spec 04, *Critic panels*; spec 06 *Graphs list*)."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine import InvalidResumeInput
from editor.graph import hash_value, validate
from editor.graph.templates import APPROVAL_SCHEMA, approval_gate, parallel, rounds
from tests.unit.engine.harness import Harness

PANEL_INPUT = {"subject": "Is the plan sound?", "critics": ["a", "b"]}
SKIP = "no live inbound edge: an upstream branch routed to another case"


def writer(h: Harness) -> str:
    return h.scripted('{"draft": "hello"}', prompt="Write a draft.")


def test_the_approval_gate_suspends_after_the_writer(h: Harness) -> None:
    document = approval_gate(writer(h))
    assert validate(document) == []
    run_id = h.run(document, {"topic": "x"})
    assert h.state(run_id) == "suspended"
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "NodeExited",
        "NodeEntered",
        "Suspended",
    ]
    assert h.last(run_id)[1] == {
        "node": "review",
        "reason": "approval required at gate `review`",
        "input_schema": APPROVAL_SCHEMA,
        "value": {"draft": "hello"},
    }
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, {"approved": True})
    assert raised.value.violations == [{"path": "$", "message": "'draft' is a required property"}]


def test_an_approved_draft_is_published(h: Harness) -> None:
    run_id = h.run(approval_gate(writer(h)), {"topic": "x"})
    resumed = h.resume(run_id, {"draft": "hello!", "approved": True}, comment="ok")
    assert resumed["schema_hash"] == hash_value(APPROVAL_SCHEMA)
    assert h.drive(run_id) == "completed"
    assert h.events(run_id, start=7) == [
        ("Resumed", resumed),
        ("NodeExited", {"node": "review", "output": {"draft": "hello!", "approved": True}}),
        ("NodeEntered", {"node": "decide"}),
        ("BranchTaken", {"node": "decide", "case": "approved"}),
        ("NodeExited", {"node": "decide", "output": {"draft": "hello!", "approved": True}}),
        ("NodeSkipped", {"node": "archive", "reason": SKIP}),
        ("NodeEntered", {"node": "publish"}),
        ("ToolCallRequested", h.of(run_id, "ToolCallRequested")[0]),
        (
            "ToolCallCompleted",
            {"node": "publish", "tool": "echo", "output": {"text": "hello!"}, "call": 0},
        ),
        ("NodeExited", {"node": "publish", "output": {"text": "hello!"}}),
        ("RunCompleted", {"output": {"text": "hello!"}}),
    ]


def test_a_rejected_draft_is_archived(h: Harness) -> None:
    run_id = h.run(approval_gate(writer(h)), {"topic": "x"})
    h.resume(run_id, {"draft": "meh", "approved": False})
    assert h.drive(run_id) == "completed"
    assert h.of(run_id, "BranchTaken") == [{"node": "decide", "case": "rejected"}]
    assert h.of(run_id, "NodeSkipped") == [{"node": "publish", "reason": SKIP}]
    assert h.output(run_id) == {"draft": "meh", "approved": False}


def critic_panel(h: Harness) -> tuple[str, str]:
    return h.agent("echo", "You are a critic."), h.agent("echo", "Synthesize.")


def test_the_parallel_panel_asks_every_critic_once_then_synthesizes(h: Harness) -> None:
    critic, synthesizer = critic_panel(h)
    run_id = h.run(parallel(critic, synthesizer, ["a", "b"]), PANEL_INPUT)
    assert h.state(run_id) == "completed"
    assert [p["node"] for p in h.of(run_id, "NodeEntered") if "scope" not in p] == [
        "prompts",
        "critiques",
        "synthesize",
    ]
    assert h.of(run_id, "MapFannedOut") == [{"node": "critiques", "items": 2}]
    output = h.output(run_id)
    assert [(m["kind"], m["recipient"], m["text"]) for m in output] == [
        ("critique", "a", "Is the plan sound?"),
        ("critique", "b", "Is the plan sound?"),
    ]


def test_the_rounds_panel_runs_every_round_with_the_echo_model(h: Harness) -> None:
    critic, synthesizer = critic_panel(h)
    run_id = h.run(rounds(critic, synthesizer, ["a", "b"], 3), PANEL_INPUT)
    assert h.state(run_id) == "completed"
    assert h.of(run_id, "FoldConverged") == [
        {"node": "panel", "winner_index": 2, "reason": "bound"}
    ]
    assert [p["index"] for p in h.of(run_id, "FoldIterationJoined")] == [0, 1, 2]
    output = h.output(run_id)
    assert output["converged"] is False
    assert output["round"] == 3
    transcript = output["transcript"]
    assert len(transcript) == 6
    assert [(m["round"], m["kind"], m["sender"], m["recipient"]) for m in transcript] == [
        (1, "critique", "a", "system"),
        (1, "critique", "b", "system"),
        (2, "rebuttal", "a", "b"),
        (2, "rebuttal", "b", "a"),
        (3, "rebuttal", "a", "b"),
        (3, "rebuttal", "b", "a"),
    ]
    # each critic runs inside a fold pass and a map item: two scope levels, outermost first
    # (the items of one round run concurrently, so compare them as a set)
    critic_scopes = {
        tuple(map(tuple, p["scope"])) for p in h.of(run_id, "NodeEntered") if p["node"] == "critic"
    }
    assert critic_scopes == {(("panel", r), ("critiques", i)) for r in range(3) for i in range(2)}
    assert len(h.of(run_id, "ModelCallRequested")) == 6 + 1  # the critics, then synthesize


def test_a_rounds_panel_stops_at_its_bound(h: Harness) -> None:
    critic, synthesizer = critic_panel(h)
    run_id = h.run(
        rounds(critic, synthesizer, ["a", "b", "c"], 1), {**PANEL_INPUT, "critics": ["a", "b", "c"]}
    )
    assert h.of(run_id, "FoldConverged") == [
        {"node": "panel", "winner_index": 0, "reason": "bound"}
    ]
    output: Any = h.output(run_id)
    assert len(output["transcript"]) == 3
