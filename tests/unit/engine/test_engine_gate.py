"""Gates, suspension and resume (spec 04, *Node kinds* and *Suspension and resume*)."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine import InvalidResumeInput, NotParked, RunLost, prepare_resume
from editor.graph import hash_value
from editor.graph.model import GateNode, ToolNode
from tests.unit.engine.harness import Harness, graph, now

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["ok"],
}


def gated(prompt: str | None = None) -> Any:
    return graph(
        GateNode("g", approval_schema=SCHEMA, prompt=prompt),
        ToolNode("after", "echo"),
        edges=[("g", "after")],
    )


def test_a_gate_suspends_with_the_default_reason_and_the_arrived_value(h: Harness) -> None:
    run_id = h.start(gated(), {"draft": "d"})
    assert h.drive(run_id) == "suspended"
    assert h.events(run_id) == [
        ("NodeEntered", {"node": "g"}),
        (
            "Suspended",
            {
                "node": "g",
                "reason": "approval required at gate `g`",
                "input_schema": SCHEMA,
                "value": {"draft": "d"},
            },
        ),
    ]
    status = h.store.status(run_id)
    assert status["state"] == "suspended"
    assert status["node"] == "g"
    assert status["reason"] == "approval required at gate `g`"
    assert status["input_schema"] == SCHEMA
    assert [item["kind"] for item in status["pending"]] == ["gate"]


def test_the_gate_prompt_is_the_reason(h: Harness) -> None:
    run_id = h.run(gated("Check the numbers."), 1)
    assert h.of(run_id, "Suspended")[0]["reason"] == "Check the numbers."


def test_a_suspended_run_is_not_driven_further(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    count = len(h.kinds(run_id))
    assert h.drive(run_id) == "suspended"
    assert len(h.kinds(run_id)) == count


def test_resume_records_resumed_and_the_input_becomes_the_gate_output(h: Harness) -> None:
    run_id = h.run(gated(), {"draft": "d"})
    payload = h.resume(run_id, {"ok": True}, by="bob", comment="looks fine")
    assert payload == {
        "node": "g",
        "input": {"ok": True},
        "by": "bob",
        "comment": "looks fine",
        "schema_hash": hash_value(SCHEMA),
    }
    assert h.state(run_id) == "running"
    assert h.drive(run_id) == "completed"
    assert h.events(run_id, start=3) == [
        ("Resumed", payload),
        ("NodeExited", {"node": "g", "output": {"ok": True}}),
        ("NodeEntered", {"node": "after"}),
        ("ToolCallRequested", h.of(run_id, "ToolCallRequested")[0]),
        ("ToolCallCompleted", {"node": "after", "tool": "echo", "output": {"ok": True}, "call": 0}),
        ("NodeExited", {"node": "after", "output": {"ok": True}}),
        ("RunCompleted", {"output": {"ok": True}}),
    ]
    # no second NodeEntered for the gate
    assert [p["node"] for p in h.of(run_id, "NodeEntered")] == ["g", "after"]


def test_a_blank_comment_is_left_out(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    assert "comment" not in h.resume(run_id, {"ok": False}, comment="  ")


def test_an_invalid_resume_input_names_every_violation_and_records_nothing(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    before = list(h.store.events[run_id])
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, {"ok": "yes", "notes": [3, "fine", False]})
    assert [v["path"] for v in raised.value.violations] == ["$.notes[0]", "$.notes[2]", "$.ok"]
    assert all(v["message"] for v in raised.value.violations)
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, {"notes": []})
    assert raised.value.violations == [{"path": "$", "message": "'ok' is a required property"}]
    assert h.store.events[run_id] == before
    assert h.state(run_id) == "suspended"


def test_top_level_array_paths_use_brackets(h: Harness) -> None:
    document = graph(GateNode("g", approval_schema={"type": "array", "items": {"type": "integer"}}))
    run_id = h.run(document, 1)
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, [1, "x"])
    assert [v["path"] for v in raised.value.violations] == ["$[1]"]


def test_a_resume_body_without_input_is_refused(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    record = h.store.load_run(run_id)
    with pytest.raises(InvalidResumeInput):
        prepare_resume(record, {}, "bob", now())


def test_a_second_resume_is_told_who_resolved_it_and_when(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    record = h.store.load_run(run_id)
    first, status = prepare_resume(record, {"input": {"ok": True}}, "bob", now())
    second, _ = prepare_resume(record, {"input": {"ok": False}}, "alice", now())
    h.store.record(run_id, first, status)
    # the store's (run, seq) guard: the second resolution loses
    with pytest.raises(RunLost):
        h.store.record(run_id, second, status)
    with pytest.raises(NotParked) as raised:
        h.resume(run_id, {"ok": False}, by="alice")
    assert raised.value.state == "running"
    assert raised.value.resolved_by == "bob"
    assert raised.value.resolved_at == first[0].recorded_at
    assert h.drive(run_id) == "completed"
    with pytest.raises(NotParked) as raised:
        h.resume(run_id, {"ok": False}, by="alice")
    assert (raised.value.state, raised.value.resolved_by) == ("completed", "bob")


def test_a_run_that_never_parked_is_not_parked(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "echo")), 1)
    with pytest.raises(NotParked) as raised:
        h.resume(run_id, {})
    assert (raised.value.state, raised.value.resolved_by, raised.value.resolved_at) == (
        "completed",
        None,
        None,
    )


def test_a_gate_after_a_gate_parks_again(h: Harness) -> None:
    document = graph(
        GateNode("g1", approval_schema={"type": "object"}),
        GateNode("g2", approval_schema={"type": "object"}),
        edges=[("g1", "g2")],
    )
    run_id = h.run(document, {"v": 0})
    h.resume(run_id, {"step": 1})
    assert h.drive(run_id) == "suspended"
    assert h.of(run_id, "Suspended")[1]["value"] == {"step": 1}
    h.resume(run_id, {"step": 2})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == {"step": 2}


def test_the_graph_is_fingerprinted_again_before_continuing(h: Harness) -> None:
    run_id = h.run(gated(), 1)
    graph_hash = h.store.runs[run_id]["graph_hash"]
    h.store.graphs[graph_hash] = h.store.graphs[graph_hash].replace(b'"g"', b'"h"')
    h.resume(run_id, {"ok": True})
    assert h.drive(run_id) == "failed"
    assert h.last(run_id) == (
        "RunFailed",
        {
            "error": f"the stored graph does not match its hash `{graph_hash}`: it was changed "
            "after it was frozen",
            "code": "fingerprint_mismatch",
        },
    )


def test_names_are_resolved_again_before_continuing(h: Harness) -> None:
    h.tool("shout", lambda value, context: value)
    document = graph(
        GateNode("g", approval_schema={"type": "object"}),
        ToolNode("t", "shout"),
        edges=[("g", "t")],
    )
    run_id = h.run(document, 1)
    h.resume(run_id, {})
    h.tools._specs.pop("shout")  # the installation lost the tool in between
    assert h.drive(run_id) == "failed"
    assert h.last(run_id)[1]["code"] == "unknown_tool"
    assert h.error(run_id).startswith("tool node `t`: no tool registered under the name `shout`")
