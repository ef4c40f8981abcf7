"""The run trace (what the run page draws): node marks at every level, the edges walked, the
branch cases taken, and the node a run failed at."""

from __future__ import annotations

from typing import Any

from editor.engine import Envelope, ToolContext, ToolError, run_trace
from editor.engine.trace import NodeMark
from editor.graph import Graph
from editor.graph.model import (
    BranchCase,
    BranchNode,
    ExpressionCondition,
    GateNode,
    MapNode,
    NodeBody,
    SubgraphBody,
    ToolNode,
)
from tests.unit.engine.harness import Harness, graph


def trace_of(h: Harness, document: Graph, run_id: str) -> Any:
    return run_trace(document, h.store.events[run_id], h.state(run_id))


def states(trace: Any) -> dict[tuple[tuple[str, ...], str], str]:
    return {key: mark.state for key, mark in trace.marks.items()}


def branching() -> Graph:
    cases = (
        BranchCase("approved", ExpressionCondition("ok == true")),
        BranchCase("rejected", ExpressionCondition("!(ok == true)")),
    )
    return graph(
        ToolNode("start", "echo"),
        BranchNode("decide", cases),
        ToolNode("publish", "echo"),
        ToolNode("archive", "echo"),
        edges=[
            ("start", "decide"),
            ("decide", "publish", "approved"),
            ("decide", "archive", "rejected"),
        ],
    )


def test_the_path_taken_is_the_edges_walked_and_the_case_chosen(h: Harness) -> None:
    document = branching()
    run_id = h.run(document, {"ok": True})
    trace = trace_of(h, document, run_id)
    assert states(trace) == {
        ((), "start"): "done",
        ((), "decide"): "done",
        ((), "publish"): "done",
        ((), "archive"): "skipped",
    }
    assert trace.marks[((), "decide")] == NodeMark("done", 1, ("approved",))
    assert trace.walked == {
        ((), "start", "decide", None),
        ((), "decide", "publish", "approved"),
    }
    assert trace.failed is None


def test_a_failed_tool_is_marked_failed_and_the_run_goes_no_further(h: Harness) -> None:
    def broken(value: Any, context: ToolContext) -> Any:
        raise ToolError("down")

    h.tool("broken", broken)
    document = graph(
        ToolNode("a", "echo"),
        ToolNode("b", "broken"),
        ToolNode("c", "echo"),
        edges=[("a", "b"), ("b", "c")],
    )
    run_id = h.run(document, 1)
    trace = trace_of(h, document, run_id)
    assert states(trace) == {((), "a"): "done", ((), "b"): "failed"}
    assert trace.failed == ((), "b")
    assert trace.walked == {((), "a", "b", None)}


def test_a_branch_that_failed_before_its_entry_is_marked_failed(h: Harness) -> None:
    cases = (BranchCase("never", ExpressionCondition("false")),)
    document = graph(
        ToolNode("a", "echo"), BranchNode("b", cases), ToolNode("c", "echo"),
        edges=[("a", "b"), ("b", "c", "never")],
    )  # fmt: skip
    run_id = h.run(document, 1)
    assert states(trace_of(h, document, run_id))[((), "b")] == "failed"


def test_a_failed_map_item_marks_its_body_node_and_the_map_and_counts_the_items(
    h: Harness,
) -> None:
    def picky(value: Any, context: ToolContext) -> Any:
        if value == 2:
            raise ToolError("no twos")
        return value

    h.tool("picky", picky)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "picky")
    )
    run_id = h.run(document, {"items": [1, 2, 3]})
    trace = trace_of(h, document, run_id)
    assert trace.marks[((), "m")].state == "failed"
    assert trace.marks[((), "each")] == NodeMark("failed", 2)  # item 0 done, item 1 failed
    assert trace.failed == ((), "each")


def test_nodes_inside_a_subgraph_body_are_marked_at_their_level(h: Harness) -> None:
    inner = graph(ToolNode("x", "echo"), ToolNode("y", "echo"), edges=[("x", "y")])
    document = graph(MapNode("m", over="items", concurrency=2, body=SubgraphBody(inner)))
    run_id = h.run(document, {"items": [1, 2, 3]})
    trace = trace_of(h, document, run_id)
    assert trace.marks[(("m",), "x")] == NodeMark("done", 3)
    assert trace.marks[(("m",), "y")] == NodeMark("done", 3)
    assert ((("m",), "x", "y", None)) in trace.walked
    assert trace.marks[((), "m")].state == "done"


def test_a_waiting_gate_and_a_live_run(h: Harness) -> None:
    document = graph(
        ToolNode("a", "echo"), GateNode("review", {}), ToolNode("c", "echo"),
        edges=[("a", "review"), ("review", "c")],
    )  # fmt: skip
    run_id = h.run(document, 1)
    trace = trace_of(h, document, run_id)
    assert states(trace) == {((), "a"): "done", ((), "review"): "waiting"}
    h.resume(run_id, {"ok": 1})
    # Resolved, not driven yet: the gate is entered and not left while the run lives.
    assert states(trace_of(h, document, run_id))[((), "review")] == "running"


def test_an_abandoned_run_leaves_its_open_node_stopped(h: Harness) -> None:
    document = graph(GateNode("review", {}))
    run_id = h.run(document, 1)
    h.abandon(run_id)
    assert states(trace_of(h, document, run_id)) == {((), "review"): "stopped"}


def test_a_failure_recorded_without_its_node_marks_every_open_node_failed(h: Harness) -> None:
    """Logs written before ``RunFailed`` named its node (or a worker that failed a drive)."""
    document = graph(GateNode("review", {}), ToolNode("c", "echo"), edges=[("review", "c")])
    run_id = h.start(document, 1)
    events = h.store.events[run_id]
    at = events[0].recorded_at
    events.extend(
        [
            Envelope(run_id, 1, at, "NodeEntered", {"node": "review"}),
            Envelope(run_id, 2, at, "RunFailed", {"error": "the worker stopped"}),
        ]
    )
    trace = run_trace(document, events, "failed")
    assert states(trace) == {((), "review"): "failed"}
    assert trace.failed is None
