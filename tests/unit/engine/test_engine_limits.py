"""The run limits (spec 04, *Limits*): crossing one fails the run with a message naming it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from itertools import pairwise
from typing import Any

import orjson
import pytest

from editor.engine import ModelReply, ModelRequest, ToolContext, ToolEffect, ToolError
from editor.graph.model import AgentNode, GateNode, MapNode, NodeBody, ToolNode
from tests.unit.engine.harness import FakeClock, Harness, Recorder, graph


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of a test, so a call the engine stopped waiting for can finish."""
    event = threading.Event()
    yield event
    event.set()


def chain(*ids: str) -> Any:
    return graph(
        *(ToolNode(node_id, "echo") for node_id in ids),
        edges=list(pairwise(ids)),
    )


def test_nodes_visited_per_run(h: Harness) -> None:
    h.limits = replace(h.limits, max_nodes_visited=2)
    run_id = h.run(chain("a", "b", "c"), 1)
    assert [p["node"] for p in h.of(run_id, "NodeEntered")] == ["a", "b"]
    assert h.last(run_id) == (
        "RunFailed",
        {
            "error": "the run visited more than 2 nodes (GATEHOUSE_RUN_MAX_NODES)",
            "code": "limit_exceeded",
            "node": "c",
        },
    )


def test_nodes_visited_counts_map_items_beyond_the_item_cap_and_survives_a_re_drive(
    h: Harness,
) -> None:
    # One visit per map item is bounded by the item cap instead (up to that cap per run), so a
    # map of exactly the item cap can finish; the visits beyond count.
    h.limits = replace(h.limits, max_nodes_visited=3, max_map_items=2)
    document = graph(
        GateNode("g", approval_schema={}),
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")),
        MapNode("n", over="items", concurrency=1, body=NodeBody("other")),
        ToolNode("each", "echo"),
        ToolNode("other", "echo"),
        edges=[("g", "m"), ("g", "n")],
    )
    run_id = h.run(document)
    h.resume(run_id, {"items": [1, 2]})
    assert h.drive(run_id) == "failed"  # g, m, each×2, n, other[0] is the sixth
    assert h.error(run_id) == (
        "the run visited more than 3 nodes (GATEHOUSE_RUN_MAX_NODES), besides one for each "
        "of its first 2 map items"
    )
    assert h.kinds(run_id).count("NodeEntered") == 5
    h.limits = replace(h.limits, max_nodes_visited=5)  # 7 visits: 5 and 2 map items
    run_id = h.run(document)
    h.resume(run_id, {"items": [1, 2]})
    assert h.drive(run_id) == "completed"


def test_map_items_per_node(h: Harness) -> None:
    h.limits = replace(h.limits, max_map_items=2)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "echo")
    )
    assert h.output(h.run(document, {"items": [1, 2]})) == [1, 2]
    run_id = h.run(document, {"items": [1, 2, 3]})
    assert h.events(run_id) == [
        (
            "RunFailed",
            {
                "error": "map node `m`: 3 items is more than 2 (GATEHOUSE_RUN_MAX_MAP_ITEMS)",
                "code": "limit_exceeded",
                "node": "m",
            },
        )
    ]


def test_tool_call_timeout(h: Harness, release: threading.Event) -> None:
    h.limits = replace(h.limits, tool_timeout=0.05)
    started = threading.Event()

    def blocks(value: Any, context: ToolContext) -> Any:
        started.set()
        release.wait(10)
        return "too late"

    h.tool("blocks", blocks)
    run_id = h.run(graph(ToolNode("t", "blocks")))
    assert started.is_set()
    assert h.kinds(run_id)[-2:] == ["ToolCallRequested", "RunFailed"]
    assert h.last(run_id)[1] == {
        "error": "tool node `t` failed: the call took longer than 0.05 s (GATEHOUSE_TOOL_TIMEOUT)",
        "code": "limit_exceeded",
        "node": "t",
    }


def test_model_call_timeout(h: Harness, release: threading.Event) -> None:
    h.limits = replace(h.limits, model_timeout=0.05)

    def blocks(request: ModelRequest) -> ModelReply:
        release.wait(10)
        return ModelReply("too late")

    h.providers.extra["scripted"] = Recorder(blocks)
    run_id = h.run(graph(AgentNode("a", h.scripted("x"))))
    assert h.last(run_id)[1] == {
        "error": "agent node `a`: the model call took longer than 0.05 s (GATEHOUSE_MODEL_TIMEOUT)",
        "code": "limit_exceeded",
        "node": "a",
    }


def test_one_event_payload(h: Harness) -> None:
    h.limits = replace(h.limits, max_event_bytes=200)
    h.tool("big", lambda value, context: "x" * 300)
    run_id = h.run(graph(ToolNode("t", "big")), 1)
    assert h.kinds(run_id) == ["GraphRunStarted", "NodeEntered", "ToolCallRequested", "RunFailed"]
    assert h.last(run_id)[1] == {
        "error": "an event payload (ToolCallCompleted) is larger than 200 bytes "
        "(GATEHOUSE_EVENT_MAX_BYTES)",
        "code": "limit_exceeded",
    }


def test_an_oversized_run_output_fails_the_run(h: Harness) -> None:
    h.limits = replace(h.limits, max_event_bytes=120)
    run_id = h.run(graph(GateNode("g", approval_schema={})))
    h.resume(run_id, "y" * 115)
    assert h.drive(run_id) == "failed"
    assert h.kinds(run_id)[-2:] == ["Resumed", "RunFailed"]
    assert h.error(run_id) == (
        "an event payload (NodeExited) is larger than 120 bytes (GATEHOUSE_EVENT_MAX_BYTES)"
    )


def test_the_run_still_ends_on_record_when_its_failure_is_over_the_limit(h: Harness) -> None:
    # the limit is so small that even the RunFailed naming it is over it
    h.limits = replace(h.limits, max_event_bytes=20)
    run_id = h.run(graph(ToolNode("t", "echo")), "a long enough input value")
    assert h.state(run_id) == "failed"
    assert h.error(run_id) == (
        "an event payload (ToolCallRequested) is larger than 20 bytes (GATEHOUSE_EVENT_MAX_BYTES)"
    )


def test_a_run_whose_events_pass_the_run_byte_limit_fails_naming_it(h: Harness) -> None:
    h.limits = replace(h.limits, max_run_bytes=2000)
    run_id = h.run(chain(*(f"n{i}" for i in range(50))), "x" * 100)
    assert h.state(run_id) == "failed"
    failure = h.last(run_id)[1]
    assert failure["code"] == "limit_exceeded"
    assert failure["error"].startswith(
        "the run's events would come to more than 2000 bytes in all (GATEHOUSE_RUN_MAX_BYTES)"
    )
    recorded = sum(len(orjson.dumps(payload)) for _, payload in h.events(run_id, start=0))
    # Everything before the failure fits; the failure itself is recorded all the same.
    assert recorded - len(orjson.dumps(failure)) <= 2000
    assert len(h.of(run_id, "NodeEntered")) < 50


def test_a_run_under_the_run_byte_limit_completes(h: Harness) -> None:
    h.limits = replace(h.limits, max_run_bytes=1 << 20)
    run_id = h.run(chain(*(f"n{i}" for i in range(50))), "x" * 100)
    assert h.state(run_id) == "completed"


def test_the_run_byte_limit_counts_the_events_of_earlier_drives(h: Harness) -> None:
    h.limits = replace(h.limits, max_run_bytes=1500)
    document = graph(
        ToolNode("a", "echo"),
        GateNode("g", approval_schema={}),
        *(ToolNode(f"b{i}", "echo") for i in range(10)),
        edges=[("a", "g"), ("g", "b0"), *pairwise(f"b{i}" for i in range(10))],
    )
    run_id = h.run(document, "y" * 100)
    assert h.state(run_id) == "suspended"
    h.resume(run_id, "z" * 100)
    assert h.drive(run_id) == "failed"
    assert "GATEHOUSE_RUN_MAX_BYTES" in h.error(run_id)


def test_run_wall_time_counts_time_in_running_only(h: Harness) -> None:
    h.clock = FakeClock()
    h.limits = replace(h.limits, wall_time=5.0)
    clock = h.clock
    h.tool("slow", lambda value, context: clock.advance(3) or value)
    document = graph(
        ToolNode("a", "slow"),
        GateNode("g", approval_schema={}),
        ToolNode("b", "slow"),
        ToolNode("c", "slow"),
        edges=[("a", "g"), ("g", "b"), ("b", "c")],
    )
    run_id = h.run(document, 1)
    assert h.state(run_id) == "suspended"  # 3 s so far
    clock.advance(7200)  # two hours waiting for a person do not count
    h.resume(run_id, 2)
    assert h.drive(run_id) == "failed"  # b brings it to 6 s: c is refused
    assert h.last(run_id)[1] == {
        "error": "the run has been running for more than 5 s (GATEHOUSE_RUN_WALL_TIME)",
        "code": "limit_exceeded",
        "node": "c",
    }
    assert [p["node"] for p in h.of(run_id, "NodeEntered")] == ["a", "g", "b"]


def test_tool_retries_apply_to_reads_not_writes(h: Harness) -> None:
    h.limits = replace(h.limits, tool_retries=2)
    attempts: list[str] = []

    def fails_twice(value: Any, context: ToolContext) -> Any:
        attempts.append(context.idempotency_key)
        if len(attempts) <= 2:
            raise ToolError("try again")
        return "ok"

    h.tool("read", fails_twice)
    run_id = h.run(graph(ToolNode("t", "read")))
    assert h.output(run_id) == "ok"
    assert len(attempts) == 3 and len(set(attempts)) == 1
    assert h.kinds(run_id).count("ToolCallRequested") == 1

    attempts.clear()
    h.tool("write", fails_twice, effect=ToolEffect.WRITE)
    run_id = h.run(graph(ToolNode("t", "write")))
    assert h.error(run_id) == "tool node `t` failed: try again"
    assert len(attempts) == 1


def test_run_wall_time_does_not_count_time_in_the_queue(h: Harness) -> None:
    h.clock = FakeClock()
    h.limits = replace(h.limits, wall_time=5.0)
    clock = h.clock
    h.tool("slow", lambda value, context: clock.advance(2) or value)
    run_id = h.start(chain("a", "b"), 1)
    clock.advance(7200)  # two hours before a worker picks the run up
    assert h.drive(run_id) == "completed"


def test_run_wall_time_counts_across_a_re_drive(h: Harness) -> None:
    h.clock = FakeClock()
    h.limits = replace(h.limits, wall_time=8.5)
    clock = h.clock

    class Crash(BaseException):
        pass

    def slow(value: Any, context: ToolContext) -> Any:
        clock.advance(4)
        if value == {"v": "crash"}:
            raise Crash
        return value

    h.tool("slow", slow)
    document = graph(
        ToolNode("a", "slow"),
        ToolNode("b", "slow", input={"v": "v"}),
        ToolNode("c", "slow"),
        edges=[("a", "b"), ("b", "c")],
    )
    run_id = h.start(document, {"v": "crash", "other": 0})  # only b's input is {"v": "crash"}
    clock.advance(100)  # queued: does not count
    with pytest.raises(Crash):
        h.drive(run_id)  # a took 4 s, then b died after 4 more
    h.tools._specs.pop("slow")
    h.tool("slow", lambda value, context: clock.advance(1) or value)
    # the re-drive re-issues b (1 s): 9 s in all, so c is refused
    assert h.drive(run_id) == "failed"
    assert [p["node"] for p in h.of(run_id, "NodeEntered")] == ["a", "b"]
    assert (
        h.error(run_id) == "the run has been running for more than 8.5 s (GATEHOUSE_RUN_WALL_TIME)"
    )
