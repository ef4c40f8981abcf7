"""Fold nodes (spec 04, *fold*): passes, stop_when, the bound, joins, subgraph bodies."""

from __future__ import annotations

from typing import Any

import pytest

from editor.graph.model import (
    BestBy,
    FoldNode,
    JoinAll,
    JoinLast,
    NodeBody,
    SubgraphBody,
    ToolNode,
)
from tests.unit.engine.harness import Harness, graph


def folded(
    h: Harness,
    join: Any = None,
    *,
    max_iterations: int = 5,
    stop_when: str = "n >= 3",
    body: Any = None,
) -> Any:
    h.tool("step", lambda value, context: {**value, "n": value["n"] + 1})
    fold = FoldNode(
        "f",
        body=body or NodeBody("step"),
        max_iterations=max_iterations,
        stop_when=stop_when,
        join=join or JoinLast(),
    )
    if body is not None:
        return graph(fold)
    return graph(fold, ToolNode("step", "step"))


def test_passes_chain_their_outputs_until_stop_when_holds(h: Harness) -> None:
    run_id = h.run(folded(h), {"n": 0})
    events = h.events(run_id)
    assert [(kind, p.get("node"), p.get("index"), p.get("scope")) for kind, p in events] == [
        ("NodeEntered", "f", None, None),
        ("FoldIterationStarted", "f", 0, None),
        ("NodeEntered", "step", None, [["f", 0]]),
        ("ToolCallRequested", "step", None, [["f", 0]]),
        ("ToolCallCompleted", "step", None, [["f", 0]]),
        ("NodeExited", "step", None, [["f", 0]]),
        ("FoldIterationJoined", "f", 0, None),
        ("FoldIterationStarted", "f", 1, None),
        ("NodeEntered", "step", None, [["f", 1]]),
        ("ToolCallRequested", "step", None, [["f", 1]]),
        ("ToolCallCompleted", "step", None, [["f", 1]]),
        ("NodeExited", "step", None, [["f", 1]]),
        ("FoldIterationJoined", "f", 1, None),
        ("FoldIterationStarted", "f", 2, None),
        ("NodeEntered", "step", None, [["f", 2]]),
        ("ToolCallRequested", "step", None, [["f", 2]]),
        ("ToolCallCompleted", "step", None, [["f", 2]]),
        ("NodeExited", "step", None, [["f", 2]]),
        ("FoldIterationJoined", "f", 2, None),
        ("FoldConverged", "f", None, None),
        ("NodeExited", "f", None, None),
        ("RunCompleted", None, None, None),
    ]
    assert [p["input"] for p in h.of(run_id, "ToolCallRequested")] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert h.of(run_id, "FoldConverged") == [
        {"node": "f", "winner_index": 2, "reason": "stop_when"}
    ]
    assert h.of(run_id, "FoldIterationStarted")[0] == {"node": "f", "index": 0}
    assert h.output(run_id) == {"n": 3}


def test_the_loop_stops_at_the_bound(h: Harness) -> None:
    run_id = h.run(folded(h, max_iterations=2), {"n": 0})
    assert h.of(run_id, "FoldConverged") == [{"node": "f", "winner_index": 1, "reason": "bound"}]
    assert len(h.of(run_id, "FoldIterationJoined")) == 2
    assert h.output(run_id) == {"n": 2}


def test_stop_when_holding_on_the_last_allowed_pass_is_stop_when(h: Harness) -> None:
    run_id = h.run(folded(h, max_iterations=3), {"n": 0})
    assert h.of(run_id, "FoldConverged") == [
        {"node": "f", "winner_index": 2, "reason": "stop_when"}
    ]


def test_join_all_gives_every_pass_output(h: Harness) -> None:
    run_id = h.run(folded(h, JoinAll()), {"n": 0})
    assert h.output(run_id) == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert h.of(run_id, "FoldConverged")[0]["winner_index"] == 2


def scores(h: Harness, values: list[Any], reference: str = "score") -> str:
    """A fold whose pass ``i`` outputs ``{"i": i + 1, "score": values[i]}``; returns the run."""
    h.tool(
        "scored",
        lambda value, context: {"i": value["i"] + 1, "score": values[value["i"]]},
    )
    document = graph(
        FoldNode(
            "f",
            body=NodeBody("s"),
            max_iterations=len(values),
            stop_when="i > 100",
            join=BestBy(reference),
        ),
        ToolNode("s", "scored"),
    )
    return h.run(document, {"i": 0})


@pytest.mark.parametrize(
    ("values", "winner"),
    [
        ([0.2, 0.9, 0.5], 1),
        ([3, 7, 7, 1], 1),  # ties: the earliest pass wins
        (["zeta", 5, "alpha"], 1),  # any number: numbers compete, strings do not
        (["b", "c", "a"], 1),  # only strings: strings compete
        ([None, True, {"x": 1}, "m", 2], 4),  # booleans and others never compete
        ([1, 2.5, 2], 1),  # integers and floats compete together
        ([-1, "z", None], 0),
    ],
)
def test_best_by_picks_the_greatest_value(h: Harness, values: list[Any], winner: int) -> None:
    run_id = scores(h, values)
    assert h.of(run_id, "FoldConverged") == [
        {"node": "f", "winner_index": winner, "reason": "bound"}
    ]
    assert h.output(run_id) == {"i": winner + 1, "score": values[winner]}


def test_best_by_with_no_comparable_value_fails_after_node_entered(h: Harness) -> None:
    run_id = scores(h, [None, True, [1]])
    assert h.kinds(run_id)[1:3] == ["NodeEntered", "FoldIterationStarted"]
    assert h.kinds(run_id)[-2:] == ["FoldIterationJoined", "RunFailed"]
    assert h.error(run_id) == (
        "fold node `f`: the `best_by` join reference `score` named no comparable value in any pass"
    )
    assert h.of(run_id, "FoldConverged") == []


def test_best_by_reads_a_nested_path(h: Harness) -> None:
    h.tool("nest", lambda value, context: {"i": value["i"] + 1, "r": {"s": [value["i"] % 2]}})
    document = graph(
        FoldNode(
            "f", body=NodeBody("s"), max_iterations=3, stop_when="i > 9", join=BestBy("r.s.0")
        ),
        ToolNode("s", "nest"),
    )
    run_id = h.run(document, {"i": 0})
    assert h.of(run_id, "FoldConverged")[0]["winner_index"] == 1


def test_a_subgraph_body_runs_like_a_maps(h: Harness) -> None:
    h.tool("inc", lambda value, context: {"n": value["n"] + 1})
    body = graph(ToolNode("a", "inc"), ToolNode("b", "inc"), edges=[("a", "b")])
    run_id = h.run(folded(h, body=SubgraphBody(body), stop_when="n >= 4"), {"n": 0})
    assert h.output(run_id) == {"n": 4}
    assert [(p["node"], p["scope"]) for p in h.of(run_id, "NodeEntered") if "scope" in p] == [
        ("a", [["f", 0]]),
        ("b", [["f", 0]]),
        ("a", [["f", 1]]),
        ("b", [["f", 1]]),
    ]


def test_the_accumulator_schema_is_checked_after_each_pass(h: Harness) -> None:
    h.tool("step", lambda value, context: {"n": value["n"] + 1})
    document = graph(
        FoldNode(
            "f",
            body=NodeBody("s"),
            max_iterations=5,
            stop_when="n >= 9",
            join=JoinLast(),
            accumulator_schema={"type": "object", "properties": {"n": {"maximum": 1}}},
        ),
        ToolNode("s", "step"),
    )
    run_id = h.run(document, {"n": 0})
    assert h.error(run_id) == (
        "fold node `f`: pass 1's output does not match its accumulator_schema: "
        "$.n: 2 is greater than the maximum of 1"
    )
