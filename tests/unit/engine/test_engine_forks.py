"""Forks (spec 05, ``POST /v1/runs/{id}/fork``): a new run opens with its origin's log up to a
node, replays it, and drives from that node; writes it would run again need acknowledging."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from editor.engine import (
    Envelope,
    InvalidForkNode,
    OriginMoving,
    OriginNeedsReconciliation,
    ToolContext,
    ToolEffect,
    ToolError,
    WriteReplayHazard,
    allowed_sources,
    audit,
    fork_origin,
    plan_fork,
    run_status,
)
from editor.graph import graph_hash
from editor.graph.model import (
    BranchCase,
    BranchNode,
    ExpressionCondition,
    GateNode,
    MapNode,
    NodeBody,
    ToolNode,
)
from tests.unit.engine.harness import FakeClock, Harness, graph, now, tool_key


class Counted:
    """A tool that counts its calls by input and fails the first ``failures`` of them."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.calls: Counter[str] = Counter()

    def __call__(self, value: Any, context: ToolContext) -> Any:
        self.calls[context.node] += 1
        if sum(self.calls.values()) <= self.failures:
            raise ToolError("not yet")
        return value


def chain(h: Harness, flaky: Counted, counted: Counted) -> Any:
    """a (counted) → b (flaky) → c (counted)."""
    h.tool("counted", counted)
    h.tool("flaky", flaky)
    return graph(
        ToolNode("a", "counted"),
        ToolNode("b", "flaky"),
        ToolNode("c", "counted"),
        edges=[("a", "b"), ("b", "c")],
    )


def entry_seq(h: Harness, run_id: str, node: str) -> int:
    return next(
        e.seq
        for e in h.store.events[run_id]
        if e.kind == "NodeEntered" and e.payload == {"node": node}
    )


def test_a_fork_from_the_failed_node_replays_the_rest_and_completes(h: Harness) -> None:
    flaky, counted = Counted(failures=1), Counted()
    document = chain(h, flaky, counted)
    origin = h.run(document, {"n": 1})
    assert h.state(origin) == "failed"
    assert h.last(origin)[1]["node"] == "b"

    child = h.fork(origin, "b")
    assert h.state(child) == "running"  # waiting for a driver, as a cut-off drive leaves it
    assert h.drive(child) == "completed"
    assert h.output(child) == {"n": 1}
    # `a` ran once, in the origin; the fork replayed it. `b` ran again, then `c` for the first time.
    assert counted.calls == Counter({"a": 1, "c": 1})
    assert flaky.calls == Counter({"b": 2})


def test_the_fork_opens_with_the_origin_log_below_the_node_and_records_where_it_came_from(
    h: Harness,
) -> None:
    document = chain(h, Counted(failures=1), Counted())
    origin = h.run(document, {"n": 1})
    boundary = entry_seq(h, origin, "b")

    child = h.fork(origin, "b")
    opened, before = h.store.events[child], h.store.events[origin]
    assert len(opened) == boundary
    assert opened[0].payload == {
        **before[0].payload,
        "forked_from": {
            "run_id": origin,
            "through_seq": boundary - 1,
            "from_node": "b",
            "graph_hash": graph_hash(document),
            "acknowledged_writes": [],
        },
    }
    for mine, theirs in zip(opened, before, strict=False):
        assert mine.run_id == child
        assert (mine.seq, mine.recorded_at) == (theirs.seq, theirs.recorded_at)
        assert mine.kind == theirs.kind
        if mine.seq:
            assert mine.payload == theirs.payload
    assert fork_origin(opened) == opened[0].payload["forked_from"]
    assert fork_origin(before) is None
    # Every field is in the catalogue: `manage.py audit_events` finds nothing unmodeled.
    assert h.drive(child) == "completed"
    assert audit(h.store.events[child]).clean
    assert audit(h.store.events[origin]).clean  # RunFailed's node is modeled too


def test_a_fork_from_the_first_node_waits_in_the_queue(h: Harness) -> None:
    document = chain(h, Counted(failures=1), Counted())
    origin = h.run(document, 1)
    child = h.fork(origin, "a")
    assert h.kinds(child) == ["GraphRunStarted"]
    assert h.state(child) == "queued"
    assert h.drive(child) == "completed"


def test_the_opening_append_of_a_fork_is_taken_only_by_a_new_run() -> None:
    kinds = ["GraphRunStarted", "NodeEntered", "Suspended", "Resumed", "NodeExited"]
    assert allowed_sources(kinds, "running") == {"queued"}


def test_a_resolved_gate_before_the_node_is_replayed_not_asked_again(h: Harness) -> None:
    counted = Counted()
    h.tool("counted", counted)
    document = graph(
        GateNode("review", {"type": "object"}),
        ToolNode("publish", "counted"),
        edges=[("review", "publish")],
    )
    origin = h.run(document, {"draft": "x"})
    h.resume(origin, {"ok": True})
    assert h.drive(origin) == "completed"

    child = h.fork(origin, "publish")
    assert h.drive(child) == "completed"
    assert h.output(child) == {"ok": True}
    assert h.kinds(child).count("Suspended") == 1  # the origin's, replayed
    assert counted.calls == Counter({"publish": 2})


def test_a_branch_before_the_node_keeps_the_case_it_took(h: Harness) -> None:
    counted = Counted()
    h.tool("counted", counted)
    cases = (
        BranchCase("yes", ExpressionCondition("go == true")),
        BranchCase("no", ExpressionCondition("!(go == true)")),
    )
    document = graph(
        BranchNode("decide", cases),
        ToolNode("yes_path", "counted"),
        ToolNode("no_path", "counted"),
        edges=[("decide", "yes_path", "yes"), ("decide", "no_path", "no")],
    )
    origin = h.run(document, {"go": True})
    child = h.fork(origin, "yes_path")
    assert h.drive(child) == "completed"
    assert h.kinds(child).count("NodeSkipped") == 1
    assert counted.calls == Counter({"yes_path": 2})


def test_a_fork_of_an_old_run_has_a_wall_time_of_its_own(h: Harness) -> None:
    h.clock = FakeClock()
    document = chain(h, Counted(failures=1), Counted())
    origin = h.run(document, 1)
    h.clock.advance(2 * 3600)  # the wall time is an hour; the origin ran two hours ago
    child = h.fork(origin, "b")
    assert h.drive(child) == "completed"


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ("ghost", "never entered node `ghost`; fork from a node the run reached"),
        ("no_path", "skipped node `no_path`: a fork starts at a node the run entered"),
        ("each", "node `each` runs inside the body of `m`; fork from `m`"),
    ],
)
def test_a_fork_starts_only_at_a_node_the_run_entered_at_the_top(
    h: Harness, node: str, message: str
) -> None:
    cases = (
        BranchCase("yes", ExpressionCondition("true")),
        BranchCase("no", ExpressionCondition("false")),
    )
    document = graph(
        BranchNode("decide", cases),
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")),
        ToolNode("each", "echo"),
        ToolNode("no_path", "echo"),
        edges=[("decide", "m", "yes"), ("decide", "no_path", "no")],
    )
    origin = h.run(document, {"items": [1, 2]})
    assert h.state(origin) == "completed"
    with pytest.raises(InvalidForkNode) as refused:
        h.fork(origin, node)
    assert message in str(refused.value)
    assert refused.value.node == node


def test_an_origin_waiting_for_a_reconciliation_cannot_be_forked(h: Harness) -> None:
    h.tool("send", lambda value, context: "sent", effect=ToolEffect.WRITE)
    document = graph(ToolNode("t", "send"))
    origin = h.start(document, 1)
    h.store.record(origin, *_cut_off_write(h, origin))
    assert h.drive(origin) == "needs_reconciliation"
    with pytest.raises(OriginNeedsReconciliation) as refused:
        h.fork(origin, "t")
    assert refused.value.intent is not None
    assert refused.value.intent["tool"] == "send"


def _cut_off_write(h: Harness, run_id: str) -> tuple[list, dict[str, Any]]:
    """The events a drive leaves when its worker dies inside a write."""
    at = now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    events = [
        Envelope(run_id, 1, at, "NodeEntered", {"node": "t"}),
        Envelope(
            run_id,
            2,
            at,
            "ToolCallRequested",
            {
                "node": "t",
                "tool": "send",
                "input": 1,
                "effect": "write",
                "idempotency_key": tool_key(run_id, "t"),
                "call": 0,
            },
        ),
    ]
    return events, run_status([*h.store.events[run_id], *events])


def test_a_run_still_moving_cannot_be_forked(h: Harness) -> None:
    document = chain(h, Counted(), Counted())
    origin = h.start(document, 1)
    with pytest.raises(OriginMoving) as refused:
        h.fork(origin, "a")
    assert refused.value.state == "queued"


def written(h: Harness) -> tuple[str, Counted]:
    """a (echo) → send (a write) → after (echo), run to the end."""
    sends = Counted()
    h.tool("send", sends, effect=ToolEffect.WRITE)
    document = graph(
        ToolNode("a", "echo"),
        ToolNode("send", "send"),
        ToolNode("after", "echo"),
        edges=[("a", "send"), ("send", "after")],
    )
    return h.run(document, {"to": "x"}), sends


def test_a_fork_over_a_recorded_write_is_refused_until_it_is_acknowledged(h: Harness) -> None:
    origin, sends = written(h)
    write = next(
        e
        for e in h.store.events[origin]
        if e.kind == "ToolCallRequested" and e.payload["tool"] == "send"
    )
    listed = {
        "seq": write.seq,
        "tool": "send",
        "input": {"to": "x"},
        "idempotency_key": None,
        "recorded_at": write.recorded_at,
    }
    before = len(h.store.runs)
    with pytest.raises(WriteReplayHazard) as refused:
        h.fork(origin, "a")
    assert refused.value.writes == [listed]
    assert f"acknowledge_writes: [{write.seq}]" in str(refused.value)
    assert len(h.store.runs) == before  # nothing was created

    preview = plan_fork(h.store.load_run(origin), "a").preview()
    assert preview == {
        "origin": origin,
        "from_node": "a",
        "through_seq": 0,
        "graph_hash": h.store.runs[origin]["graph_hash"],
        "prefix_event_count": 1,
        "writes": [listed],
        "unacknowledged_writes": [write.seq],
        "would_proceed": False,
    }
    assert plan_fork(h.store.load_run(origin), "a", [write.seq]).preview()["would_proceed"]

    child = h.fork(origin, "send", acknowledged=[write.seq, 999])
    assert h.store.events[child][0].payload["forked_from"]["acknowledged_writes"] == [write.seq]
    assert h.drive(child) == "completed"
    assert sends.calls == Counter({"send": 2})


def test_a_fork_after_the_write_needs_no_acknowledgement(h: Harness) -> None:
    origin, sends = written(h)
    plan = plan_fork(h.store.load_run(origin), "after")
    assert plan.writes == () and plan.would_proceed
    child = h.fork(origin, "after")
    assert h.drive(child) == "completed"
    assert sends.calls == Counter({"send": 1})


def test_a_failure_inside_a_map_item_names_the_body_node_and_its_scope(h: Harness) -> None:
    def picky(value: Any, context: ToolContext) -> Any:
        if value == 2:
            raise ToolError("two is not allowed")
        return value

    h.tool("picky", picky)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "picky")
    )
    run_id = h.run(document, {"items": [1, 2, 3]})
    assert h.last(run_id) == (
        "RunFailed",
        {
            "error": "tool node `each` failed: two is not allowed",
            "node": "each",
            "scope": [["m", 1]],
        },
    )
