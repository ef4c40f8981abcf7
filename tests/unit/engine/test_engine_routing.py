"""What each instance of a node received, read back from the log (the run page's node detail)."""

from __future__ import annotations

from typing import Any

from editor.engine import levels
from editor.engine.routing import routed_inputs
from editor.graph import MISSING, Graph
from editor.graph.model import (
    BranchCase,
    BranchNode,
    ExpressionCondition,
    FoldNode,
    JoinLast,
    MapNode,
    NodeBody,
    SubgraphBody,
    ToolNode,
)
from tests.unit.engine.harness import Harness, graph


def inputs(h: Harness, document: Graph, run_id: str, node: str, *scopes: Any) -> dict:
    record = h.store.load_run(run_id)
    wanted = [tuple(tuple(pair) for pair in scope) for scope in scopes] or [()]
    return routed_inputs(levels(document), record.input, record.events, wanted, node)


def test_an_entry_node_gets_the_run_input_and_the_next_one_its_output(h: Harness) -> None:
    h.tool("inc", lambda value, context: value + 1)
    document = graph(ToolNode("a", "inc"), ToolNode("b", "inc"), edges=[("a", "b")])
    run_id = h.run(document, 1)
    assert inputs(h, document, run_id, "a") == {(): 1}
    assert inputs(h, document, run_id, "b") == {(): 2}


def test_a_node_behind_the_case_not_taken_received_nothing(h: Harness) -> None:
    cases = (
        BranchCase("big", ExpressionCondition("n > 5")),
        BranchCase("small", ExpressionCondition("n <= 5")),
    )
    document = graph(
        BranchNode("b", cases), ToolNode("big", "echo"), ToolNode("small", "echo"),
        edges=[("b", "big", "big"), ("b", "small", "small")],
    )  # fmt: skip
    run_id = h.run(document, {"n": 9})
    assert inputs(h, document, run_id, "big") == {(): {"n": 9}}
    assert inputs(h, document, run_id, "small") == {(): MISSING}


def test_map_items_get_their_elements_and_fold_passes_the_previous_output(h: Harness) -> None:
    h.tool("inc", lambda value, context: {"n": value["n"] + 1})
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "echo")
    )
    run_id = h.run(document, {"items": [{"n": 1}, {"n": 2}]})
    assert inputs(h, document, run_id, "each", [["m", 0]], [["m", 1]]) == {
        (("m", 0),): {"n": 1},
        (("m", 1),): {"n": 2},
    }
    document = graph(
        FoldNode("f", NodeBody("step"), 3, "n >= 100", JoinLast()), ToolNode("step", "inc")
    )
    run_id = h.run(document, {"n": 1})
    assert inputs(h, document, run_id, "step", [["f", 0]], [["f", 1]], [["f", 2]]) == {
        (("f", 0),): {"n": 1},
        (("f", 1),): {"n": 2},
        (("f", 2),): {"n": 3},
    }


def test_nodes_inside_a_subgraph_body_get_their_item_and_each_other(h: Harness) -> None:
    h.tool("double", lambda value, context: value * 2)
    inner = graph(ToolNode("x", "double"), ToolNode("y", "double"), edges=[("x", "y")])
    document = graph(MapNode("m", over="items", concurrency=1, body=SubgraphBody(inner)))
    run_id = h.run(document, {"items": [1, 5]})
    assert inputs(h, document, run_id, "x", [["m", 0]], [["m", 1]]) == {
        (("m", 0),): 1,
        (("m", 1),): 5,
    }
    assert inputs(h, document, run_id, "y", [["m", 1]]) == {(("m", 1),): 10}
