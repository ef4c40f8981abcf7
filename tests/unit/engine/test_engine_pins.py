"""A test run's pinned outputs (issue 24): a pinned node does not run; its pin is recorded as
its output (``NodeExited`` with ``pinned: true``) and flows on; the audit knows the field."""

from __future__ import annotations

from typing import Any

from editor.engine import audit
from editor.graph.model import GateNode, ToolNode
from tests.unit.engine.harness import Harness, graph


def test_a_pinned_node_is_not_run_and_its_pin_is_recorded_as_its_output(h: Harness) -> None:
    called: list[Any] = []
    h.tool("costly", lambda value, context: called.append(value) or "fresh")
    document = graph(ToolNode("a", "costly"), ToolNode("b", "echo"), edges=[("a", "b")])
    run_id = h.store.start(document, "in", pins={"a": {"cached": True}})

    assert h.drive(run_id) == "completed"

    assert called == []
    assert h.events(run_id)[:2] == [
        ("NodeEntered", {"node": "a"}),
        ("NodeExited", {"node": "a", "output": {"cached": True}, "pinned": True}),
    ]
    assert h.events(run_id)[-1] == ("RunCompleted", {"output": {"cached": True}})
    assert audit(h.store.events[run_id]).clean


def test_a_pinned_gate_does_not_wait(h: Harness) -> None:
    schema = {"type": "object"}
    document = graph(
        GateNode("review", schema), ToolNode("after", "echo"), edges=[("review", "after")]
    )
    run_id = h.store.start(document, 1, pins={"review": {"approved": True}})

    assert h.drive(run_id) == "completed"
    assert "Suspended" not in h.kinds(run_id)


def test_without_pins_every_node_runs(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("a", "echo")), "x")
    assert ("NodeExited", {"node": "a", "output": "x"}) in h.events(run_id)
