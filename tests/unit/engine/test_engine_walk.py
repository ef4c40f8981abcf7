"""The walk (spec 04, *Walk*, exact): order, body nodes, data flow, skips, the run output."""

from __future__ import annotations

from editor.graph.model import (
    BranchCase,
    BranchNode,
    ExpressionCondition,
    MapNode,
    NodeBody,
    ToolNode,
)
from tests.unit.engine.harness import Harness, graph

SKIP = "no live inbound edge: an upstream branch routed to another case"


def entered(h: Harness, run_id: str) -> list[str]:
    return [p["node"] for p in h.of(run_id, "NodeEntered") if "scope" not in p]


def branch(node_id: str, *cases: tuple[str, str], on: str | None = None) -> BranchNode:
    return BranchNode(
        id=node_id, cases=tuple(BranchCase(n, ExpressionCondition(e)) for n, e in cases), on=on
    )


def test_ready_nodes_run_by_id_ascending_not_document_order(h: Harness) -> None:
    document = graph(ToolNode("c", "echo"), ToolNode("b", "echo"), ToolNode("a", "echo"))
    run_id = h.run(document, 7)
    assert entered(h, run_id) == ["a", "b", "c"]
    # the run's output is the last node's output in that order
    assert h.output(run_id) == 7
    assert h.of(run_id, "NodeExited")[-1]["node"] == "c"


def test_kahn_order_with_a_diamond_and_smallest_source_wins(h: Harness) -> None:
    document = graph(
        ToolNode("z", "echo"),
        ToolNode("y", "echo", input={"via": "b"}),
        ToolNode("x", "echo", input={"via": "a"}),
        ToolNode("w", "echo"),
        edges=[("z", "y"), ("z", "x"), ("y", "w"), ("x", "w")],
    )
    run_id = h.run(document, {"a": "from x", "b": "from y"})
    assert entered(h, run_id) == ["z", "x", "y", "w"]
    # w has two live inbound edges: the one from `x` (the smaller id) wins
    assert h.output(run_id) == {"via": "from x"}


def test_order_follows_ids_even_when_a_later_id_becomes_ready_first(h: Harness) -> None:
    # a -> m; b is an entry: the ready set is {a, b} first, then {b, m}
    document = graph(
        ToolNode("m", "echo"), ToolNode("b", "echo"), ToolNode("a", "echo"), edges=[("a", "m")]
    )
    run_id = h.run(document, 1)
    assert entered(h, run_id) == ["a", "b", "m"]


def test_an_entry_node_receives_the_run_input(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("only", "echo")), {"hello": ["world"]})
    assert h.events(run_id)[-2] == ("NodeExited", {"node": "only", "output": {"hello": ["world"]}})
    assert h.output(run_id) == {"hello": ["world"]}


def test_body_nodes_are_never_walked_alone(h: Harness) -> None:
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("body")),
        ToolNode("body", "echo"),
    )
    run_id = h.run(document, {"items": [1, 2]})
    assert entered(h, run_id) == ["m"]
    # the body is not walked after its owner: the map's output is the run's output
    assert h.output(run_id) == [1, 2]


def test_a_branch_skips_the_other_case_and_everything_only_behind_it(h: Harness) -> None:
    document = graph(
        branch("b", ("yes", "go == true"), ("no", "!(go == true)")),
        ToolNode("t_yes", "echo"),
        ToolNode("t_no", "echo"),
        ToolNode("t_after", "echo"),
        edges=[("b", "t_yes", "yes"), ("b", "t_no", "no"), ("t_no", "t_after")],
    )
    run_id = h.run(document, {"go": True})
    assert [e for e in h.events(run_id) if e[0] == "NodeSkipped"] == [
        ("NodeSkipped", {"node": "t_no", "reason": SKIP}),
        ("NodeSkipped", {"node": "t_after", "reason": SKIP}),
    ]
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "BranchTaken",
        "NodeExited",
        "NodeSkipped",
        "NodeSkipped",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    # the output of the last node that ran (the skipped ones produce nothing)
    assert h.output(run_id) == {"go": True}


def test_a_last_node_that_was_skipped_leaves_the_output_of_the_one_before(h: Harness) -> None:
    document = graph(
        branch("b", ("go", "go == true"), ("stop", "go == false")),
        ToolNode("t", "echo"),
        edges=[("b", "t", "go")],
    )
    run_id = h.run(document, {"go": False})
    # the branch passed its value through; `t` was routed past
    assert h.events(run_id)[-2:] == [
        ("NodeSkipped", {"node": "t", "reason": SKIP}),
        ("RunCompleted", {"output": {"go": False}}),
    ]


def test_a_case_with_no_edge_ends_the_run_with_the_branchs_value(h: Harness) -> None:
    document = graph(
        branch("b", ("one", "n == 1"), ("two", "n == 2"), ("three", "n == 3")),
        ToolNode("t1", "echo"),
        ToolNode("t2", "echo"),
        edges=[("b", "t1", "one"), ("b", "t2", "two")],
    )
    run_id = h.run(document, {"n": 3})
    assert h.output(run_id) == {"n": 3}


def test_a_not_taken_branch_edge_is_not_live_but_another_edge_is(h: Harness) -> None:
    # `t` has a (not taken) edge from branch `a` and a live one from `z`: it gets z's output
    document = graph(
        branch("a", ("main", "true == true"), ("other", "false == true")),
        ToolNode("main_path", "echo"),
        ToolNode("z", "echo", input={"from": "name"}),
        ToolNode("t", "echo"),
        edges=[("a", "main_path", "main"), ("a", "t", "other"), ("z", "t")],
    )
    run_id = h.run(document, {"name": "zed"})
    assert h.output(run_id) == {"from": "zed"}  # `t` ran last, on z's output
    assert h.of(run_id, "NodeSkipped") == []


def test_an_empty_document_completes_with_its_input(h: Harness) -> None:
    # its driver records the end at once: queued → running (the driver's step) → completed
    run_id = h.run(graph(), 1)
    assert h.events(run_id) == [("RunCompleted", {"output": 1})]


def test_ids_are_ordered_by_code_point(h: Harness) -> None:
    document = graph(
        ToolNode("a", "echo"), ToolNode("é", "echo"), ToolNode("_", "echo"), ToolNode("B", "echo")
    )
    run_id = h.run(document, 0)
    assert entered(h, run_id) == ["B", "_", "a", "é"]


def test_the_run_input_and_labels_open_the_log(h: Harness) -> None:
    document = graph(ToolNode("t", "echo"))
    run_id = h.store.start(document, {"x": 1}, {"team": "blue"})
    assert h.state(run_id) == "queued"
    assert h.events(run_id, start=0)[0] == (
        "GraphRunStarted",
        {
            "graph_hash": h.store.runs[run_id]["graph_hash"],
            "input": {"x": 1},
            "labels": {"team": "blue"},
        },
    )
    assert h.drive(run_id) == "completed"


def test_a_graph_that_is_not_stored_fails_the_run(h: Harness) -> None:
    missing = "sha256:" + "1" * 64
    run_id = h.store.start(missing, 1)
    assert h.drive(run_id) == "failed"
    assert h.events(run_id) == [
        (
            "RunFailed",
            {"error": f"the graph `{missing}` is not stored here", "code": "unknown_graph"},
        )
    ]


def test_a_finished_run_is_not_driven_again(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "echo")), 1)
    count = len(h.kinds(run_id))
    assert h.drive(run_id) == "completed"
    assert len(h.kinds(run_id)) == count
