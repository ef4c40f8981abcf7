"""Map nodes (spec 04, *map*): fan-out events, element order, the concurrency cap, bodies."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from editor.engine import InMemoryStore, ToolContext, ToolError
from editor.graph import hash_value
from editor.graph.model import AgentNode, MapNode, NodeBody, SubgraphBody, ToolNode
from tests.unit.engine.harness import Harness, InFlight, graph, tool_key


def mapped(body: Any = None, concurrency: int = 1, **kwargs: Any) -> Any:
    """A map ``m`` over ``items``; its body is the echo node ``each`` unless given."""
    if body is not None:
        return graph(MapNode("m", over="items", concurrency=concurrency, body=body, **kwargs))
    return graph(
        MapNode("m", over="items", concurrency=concurrency, body=NodeBody("each"), **kwargs),
        ToolNode("each", "echo"),
    )


def test_a_map_records_its_fan_out_and_each_item_in_order(h: Harness) -> None:
    h.tool("inc", lambda value, context: value + 1)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "inc")
    )
    run_id = h.run(document, {"items": [10, 20]})

    def child(index: int) -> str:
        return hash_value({"parent_run": run_id, "node": "m", "index": index})

    def item(index: int, value: int) -> list:
        scope = [["m", index]]
        return [
            ("MapIterationStarted", {"node": "m", "index": index, "child_run": child(index)}),
            ("NodeEntered", {"node": "each", "scope": scope}),
            (
                "ToolCallRequested",
                {
                    "node": "each",
                    "tool": "inc",
                    "input": value,
                    "effect": "read",
                    "idempotency_key": tool_key(run_id, "each", scope),
                    "call": 0,
                    "scope": scope,
                },
            ),
            (
                "ToolCallCompleted",
                {"node": "each", "tool": "inc", "output": value + 1, "call": 0, "scope": scope},
            ),
            ("NodeExited", {"node": "each", "output": value + 1, "scope": scope}),
            ("MapIterationJoined", {"node": "m", "index": index}),
        ]

    assert h.events(run_id) == [
        ("NodeEntered", {"node": "m"}),
        ("MapFannedOut", {"node": "m", "items": 2}),
        *item(0, 10),
        *item(1, 20),
        ("NodeExited", {"node": "m", "output": [11, 21]}),
        ("RunCompleted", {"output": [11, 21]}),
    ]


def test_an_empty_list_maps_to_an_empty_list(h: Harness) -> None:
    run_id = h.run(mapped(concurrency=4), {"items": []})
    assert h.events(run_id) == [
        ("NodeEntered", {"node": "m"}),
        ("MapFannedOut", {"node": "m", "items": 0}),
        ("NodeExited", {"node": "m", "output": []}),
        ("RunCompleted", {"output": []}),
    ]


def test_over_that_is_not_a_list_fails_before_node_entered(h: Harness) -> None:
    for value in ({"items": {"a": 1}}, {"other": []}, [1, 2]):
        run_id = h.run(mapped(), value)
        assert h.events(run_id) == [
            (
                "RunFailed",
                {
                    "error": "map node `m`: the `over` reference `items` did not resolve to a list",
                    "node": "m",
                },
            )
        ]


def test_at_most_concurrency_items_are_in_flight_at_once(h: Harness) -> None:
    in_flight = InFlight(parties=3)
    h.tool("meet", in_flight)
    document = graph(
        MapNode("m", over="items", concurrency=3, body=NodeBody("each")), ToolNode("each", "meet")
    )
    run_id = h.run(document, {"items": list(range(6))})
    assert h.output(run_id) == [0, 1, 2, 3, 4, 5]
    assert in_flight.most == 3
    # concurrent items interleave, but each item's events stay in its own order
    for index in range(6):
        scoped = [
            kind for kind, payload in h.events(run_id) if payload.get("scope") == [["m", index]]
        ]
        assert scoped == ["NodeEntered", "ToolCallRequested", "ToolCallCompleted", "NodeExited"]
    assert sorted(p["index"] for p in h.of(run_id, "MapIterationJoined")) == list(range(6))


def test_outputs_keep_element_order_when_items_finish_out_of_order(h: Harness) -> None:
    second_joined = threading.Event()

    class Watching(InMemoryStore):
        def append(self, run_id: str, events: Any, status: dict[str, Any]) -> None:
            super().append(run_id, events, status)
            if any(e.kind == "MapIterationJoined" and e.payload["index"] == 1 for e in events):
                second_joined.set()

    h.store = Watching()

    def ordered(value: Any, context: ToolContext) -> Any:
        if value == "first":  # finishes only once the second item has joined
            assert second_joined.wait(10)
        return value.upper()

    h.tool("ordered", ordered)
    document = graph(
        MapNode("m", over="items", concurrency=2, body=NodeBody("each")),
        ToolNode("each", "ordered"),
    )
    run_id = h.run(document, {"items": ["first", "second"]})
    assert [p["index"] for p in h.of(run_id, "MapIterationJoined")] == [1, 0]
    assert h.output(run_id) == ["FIRST", "SECOND"]


def test_one_failed_element_fails_the_map(h: Harness) -> None:
    def picky(value: Any, context: ToolContext) -> Any:
        if value == 2:
            raise ToolError("two is not allowed")
        return value

    h.tool("picky", picky)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "picky")
    )
    run_id = h.run(document, {"items": [1, 2, 3]})
    assert h.error(run_id) == "tool node `each` failed: two is not allowed"
    # sequential: the third element never started
    assert [p["index"] for p in h.of(run_id, "MapIterationStarted")] == [0, 1]
    assert h.of(run_id, "NodeExited") == [{"node": "each", "output": 1, "scope": [["m", 0]]}]


def test_one_failed_element_fails_a_concurrent_map(h: Harness) -> None:
    def picky(value: Any, context: ToolContext) -> Any:
        if value == 1:
            raise ToolError("one is not allowed")
        return value

    h.tool("picky", picky)
    document = graph(
        MapNode("m", over="items", concurrency=3, body=NodeBody("each")), ToolNode("each", "picky")
    )
    run_id = h.run(document, {"items": [0, 1, 2, 3, 4, 5]})
    assert h.state(run_id) == "failed"
    assert h.error(run_id) == "tool node `each` failed: one is not allowed"
    assert "NodeExited" not in [k for k, p in h.events(run_id) if p.get("node") == "m"]


def test_an_agent_body_gets_its_own_scripted_cursor_per_item(h: Harness) -> None:
    agent = h.scripted('"only reply"')
    document = graph(
        MapNode("m", over="items", concurrency=2, body=NodeBody("a")), AgentNode("a", agent)
    )
    run_id = h.run(document, {"items": ["x", "y"]})
    assert h.output(run_id) == ["only reply", "only reply"]


def test_a_subgraph_body_follows_the_run_output_rule(h: Harness) -> None:
    h.tool("inc", lambda value, context: value + 1)
    h.tool("neg", lambda value, context: -value)
    single = graph(ToolNode("one", "inc"), ToolNode("two", "inc"), edges=[("one", "two")])
    run_id = h.run(mapped(SubgraphBody(single), concurrency=2), {"items": [1, 5]})
    assert h.output(run_id) == [3, 7]
    assert ("NodeEntered", {"node": "two", "scope": [["m", 1]]}) in h.events(run_id)

    # two nodes side by side: the item's output is the last one walked (`up`, after `down`)
    several = graph(ToolNode("up", "inc"), ToolNode("down", "neg"))
    run_id = h.run(mapped(SubgraphBody(several)), {"items": [1]})
    assert h.output(run_id) == [2]
    # the subgraph walk is in id order too
    assert [p["node"] for p in h.of(run_id, "NodeEntered") if "scope" in p] == ["down", "up"]


def test_nested_maps_scope_their_events_outermost_first(h: Harness) -> None:
    inner = graph(
        MapNode("inner", over="row", concurrency=1, body=NodeBody("cell")),
        ToolNode("cell", "echo"),
    )
    document = graph(
        MapNode("outer", over="rows", concurrency=1, body=SubgraphBody(inner)),
    )
    run_id = h.run(document, {"rows": [{"row": [1, 2]}, {"row": [3]}]})
    assert h.output(run_id) == [[1, 2], [3]]
    assert ("NodeEntered", {"node": "cell", "scope": [["outer", 1], ["inner", 0]]}) in h.events(
        run_id
    )
    assert (
        "MapIterationStarted",
        {
            "node": "inner",
            "index": 0,
            "child_run": hash_value({"parent_run": run_id, "node": "inner", "index": 0}),
            "scope": [["outer", 1]],
        },
    ) in h.events(run_id)


def test_the_map_output_schema_is_checked(h: Harness) -> None:
    document = mapped(output_schema={"type": "array", "items": {"type": "string"}})
    run_id = h.run(document, {"items": ["a", 2]})
    assert h.error(run_id) == (
        "map node `m`: its output does not match its output_schema: $[1]: 2 is not of type 'string'"
    )


def test_a_wide_map_has_every_item_in_flight_at_once(h: Harness) -> None:
    """More items in flight than any fixed pool of call threads: no call waits for a thread
    (a call queued behind others would spend its timeout waiting)."""
    width = 40
    h.limits = replace(h.limits, map_concurrency=width)  # the installation's cap allows it
    in_flight = InFlight(parties=width)
    h.tool("meet", in_flight)
    document = graph(
        MapNode("m", over="items", concurrency=width, body=NodeBody("each")),
        ToolNode("each", "meet"),
    )
    run_id = h.run(document, {"items": list(range(width))})
    assert h.output(run_id) == list(range(width))
    assert in_flight.most == width


# --- the installation's cap (GATEHOUSE_RUN_MAP_CONCURRENCY) ------------------------------------


def test_the_installation_caps_a_maps_concurrency(h: Harness) -> None:
    """Found: a map ran one thread per item when its author asked for it (10,000 threads)."""
    h.limits = replace(h.limits, map_concurrency=4)
    in_flight = InFlight(parties=4)
    h.tool("meet", in_flight)
    document = graph(
        MapNode("m", over="items", concurrency=48, body=NodeBody("each")), ToolNode("each", "meet")
    )
    run_id = h.run(document, {"items": list(range(48))})
    assert h.output(run_id) == list(range(48))
    assert in_flight.most == 4


def test_nested_maps_share_the_cap_of_their_drive(h: Harness) -> None:
    h.limits = replace(h.limits, map_concurrency=4)
    in_flight = InFlight(parties=4)
    h.tool("meet", in_flight)
    inner = graph(
        MapNode("inner", over="row", concurrency=4, body=NodeBody("cell")),
        ToolNode("cell", "meet"),
    )
    document = graph(MapNode("outer", over="rows", concurrency=4, body=SubgraphBody(inner)))
    rows = [{"row": [4 * r + c for c in range(4)]} for r in range(4)]
    run_id = h.run(document, {"rows": rows})
    assert h.output(run_id) == [[4 * r + c for c in range(4)] for r in range(4)]
    assert in_flight.most == 4
    assert sum(1 for t in threading.enumerate() if t.name.startswith("gatehouse-map")) == 0


def test_a_map_of_exactly_the_item_cap_completes_with_the_default_limits(h: Harness) -> None:
    """Found: a map of GATEHOUSE_RUN_MAX_MAP_ITEMS items crossed GATEHOUSE_RUN_MAX_NODES (its
    items are visits too) and could never finish."""
    items = list(range(h.limits.max_map_items))
    h.tool("first", lambda value, context: value)
    document = graph(
        ToolNode("first", "first"),
        MapNode("m", over="items", concurrency=16, body=NodeBody("each")),
        ToolNode("each", "echo"),
        ToolNode("last", "echo"),
        edges=[("first", "m"), ("m", "last")],
    )
    run_id = h.run(document, {"items": items})
    assert h.output(run_id) == items
    assert h.kinds(run_id).count("MapIterationJoined") == len(items)
