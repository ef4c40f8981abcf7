"""``fold.on_bound`` and the pass value (spec 08, section 2)."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine import run_trace
from editor.engine.errors import NotParked
from editor.graph.model import FoldNode, JoinLast, NodeBody, ToolNode
from tests.unit.engine.harness import Harness, graph

BOUND_MESSAGE = (
    "fold node `f`: reached the max_iterations bound of 3 without `stop_when` holding, "
    "and this fold declares `on_bound: fail`"
)


def counting(h: Harness, on_bound: Any, *, stop_when: str = "n >= 10") -> Any:
    h.tool("step", lambda value, context: {"n": value["n"] + 1})
    fold = FoldNode(
        "f",
        body=NodeBody("step"),
        max_iterations=3,
        stop_when=stop_when,
        join=JoinLast(),
        on_bound=on_bound,
    )
    return graph(fold, ToolNode("step", "step"))


def test_a_fold_that_fails_on_its_bound_fails_the_run_with_every_pass_on_record(
    h: Harness,
) -> None:
    run_id = h.run(counting(h, "fail"), {"n": 0})

    assert h.state(run_id) == "failed"
    assert h.error(run_id) == BOUND_MESSAGE
    kinds = h.kinds(run_id)
    assert kinds.count("FoldIterationStarted") == 3
    assert kinds.count("FoldIterationJoined") == 3
    assert kinds[-2:] == ["FoldIterationJoined", "RunFailed"]
    assert "FoldConverged" not in kinds
    assert [p["node"] for p in h.of(run_id, "NodeExited")] == ["step"] * 3  # not the fold
    assert h.last(run_id)[1] == {"error": BOUND_MESSAGE, "code": "fold_bound_exceeded", "node": "f"}


def test_stop_when_holding_on_the_last_pass_converges_even_when_the_fold_fails_on_its_bound(
    h: Harness,
) -> None:
    run_id = h.run(counting(h, "fail", stop_when="n >= 3"), {"n": 0})

    assert h.state(run_id) == "completed"
    assert h.of(run_id, "FoldConverged") == [
        {"node": "f", "winner_index": 2, "reason": "stop_when"}
    ]
    assert h.output(run_id) == {"n": 3}


@pytest.mark.parametrize("on_bound", ["join", None])
def test_on_bound_join_and_unset_join_the_passes_at_the_bound(
    h: Harness, on_bound: str | None
) -> None:
    run_id = h.run(counting(h, on_bound), {"n": 0})

    assert h.state(run_id) == "completed"
    assert h.of(run_id, "FoldConverged") == [{"node": "f", "winner_index": 2, "reason": "bound"}]
    assert h.output(run_id) == {"n": 3}


def test_a_run_failed_on_its_bound_cannot_be_resumed(h: Harness) -> None:
    run_id = h.run(counting(h, "fail"), {"n": 0})

    with pytest.raises(NotParked) as refused:
        h.resume(run_id, {})

    assert refused.value.state == "failed"
    assert h.state(run_id) == "failed"


def test_a_pass_that_returns_a_result_envelope_counts_as_its_structured_content(
    h: Harness,
) -> None:
    h.tool(
        "mcp",
        lambda value, context: {
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": {"n": value["n"] + 1},
        },
    )
    fold = FoldNode("f", NodeBody("mcp"), 5, "n >= 2", JoinLast())
    run_id = h.run(graph(fold, ToolNode("mcp", "mcp")), {"n": 0})

    assert [p["input"] for p in h.of(run_id, "ToolCallRequested")] == [{"n": 0}, {"n": 1}]
    assert h.output(run_id) == {"n": 2}


def test_the_run_page_trace_marks_the_fold_failed_and_its_body_done_on_every_pass(
    h: Harness,
) -> None:
    document = counting(h, "fail")
    run_id = h.run(document, {"n": 0})

    trace = run_trace(document, h.store.events[run_id], h.state(run_id))

    assert trace.failed == ((), "f")
    assert trace.marks[((), "f")].state == "failed"
    assert trace.marks[((), "step")].state == "done"
    assert trace.marks[((), "step")].instances == 3
