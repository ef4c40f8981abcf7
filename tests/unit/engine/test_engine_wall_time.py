"""The run's wall time (spec 04, *Limits*; GATEHOUSE_RUN_WALL_TIME) is checked before every model
call, tool call, map item and fold pass, and caps how long a call may take; agent loops have a
default step budget (GATEHOUSE_AGENT_MAX_STEPS)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from editor.engine import ModelReply, ModelRequest, ToolCall, ToolContext
from editor.graph.model import (
    AgentNode,
    FoldNode,
    JoinLast,
    MapNode,
    NodeBody,
    ToolNode,
)
from tests.unit.engine.harness import FakeClock, Harness, Recorder, graph

SPENT = {
    "error": "the run has been running for more than 10 s (GATEHOUSE_RUN_WALL_TIME)",
    "code": "limit_exceeded",
}


def tool_call(name: str = "tick") -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": {}}]})


@pytest.fixture
def clocked(h: Harness) -> Harness:
    """A harness on a clock the tools move: ``tick`` takes 3 s; the wall time is 10 s."""
    h.clock = FakeClock()
    h.limits = replace(h.limits, wall_time=10.0)
    clock = h.clock
    h.tool("tick", lambda value, context: clock.advance(3) or value)
    return h


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_an_agent_that_keeps_calling_tools_is_stopped_by_the_wall_time(clocked: Harness) -> None:
    """Found: the wall time was checked only when a node started, so an agent that kept calling
    tools ran far past it."""
    h = clocked
    agent = h.scripted(*[tool_call()] * 40, '"done"', tools=["tick"], budget={"max_steps": 100})
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.last(run_id) == ("RunFailed", {**SPENT, "node": "a"})
    # 3 calls (9 s) are in the budget; the 4th took it to 12 s: nothing ran after it
    assert h.kinds(run_id).count("ToolCallCompleted") == 4
    assert h.kinds(run_id).count("ModelCallRequested") == 4


def test_the_wall_time_is_checked_before_each_model_call(clocked: Harness) -> None:
    h = clocked
    clock = h.clock
    assert clock is not None

    def slow_model(request: ModelRequest) -> ModelReply:
        clock.advance(4)
        return ModelReply(None, (ToolCall("c", "echo", {}),))

    h.providers.extra["scripted"] = Recorder(lambda request: slow_model(request))
    agent = h.scripted("unused", tools=["echo"], budget={"max_steps": 100})
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.last(run_id) == ("RunFailed", {**SPENT, "node": "a"})
    assert h.kinds(run_id).count("ModelCallCompleted") == 3  # 12 s: no fourth call


def test_the_wall_time_is_checked_before_each_map_item(clocked: Harness) -> None:
    h = clocked
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "tick")
    )
    run_id = h.run(document, {"items": list(range(10))})
    assert h.last(run_id) == ("RunFailed", {**SPENT, "node": "m"})
    assert len(h.of(run_id, "MapIterationStarted")) == 4


def test_the_wall_time_is_checked_before_each_fold_pass(clocked: Harness) -> None:
    h = clocked
    document = graph(
        FoldNode("f", body=NodeBody("step"), max_iterations=10, stop_when="false", join=JoinLast()),
        ToolNode("step", "tick"),
    )
    run_id = h.run(document, {})
    assert h.last(run_id) == ("RunFailed", {**SPENT, "node": "f"})
    assert len(h.of(run_id, "FoldIterationStarted")) == 4


def test_a_re_drive_of_a_run_past_its_wall_time_fails_before_it_calls_anything(
    clocked: Harness,
) -> None:
    h = clocked
    calls: list[Any] = []

    class Crash(BaseException):
        pass

    def crashes_once(value: Any, context: ToolContext) -> Any:
        calls.append(value)
        if len(calls) == 1:
            raise Crash
        return value

    h.tool("once", crashes_once)
    run_id = h.start(graph(ToolNode("t", "once")))
    with pytest.raises(Crash):
        h.drive(run_id)  # the worker died in the call: the request is on record
    assert h.clock is not None
    h.clock.advance(30)  # its lease ran out; the run was `running` all along
    assert h.drive(run_id) == "failed"
    assert h.last(run_id) == ("RunFailed", SPENT)
    assert len(calls) == 1  # the call was not made again


def test_a_tool_call_may_take_only_what_is_left_of_the_wall_time(
    h: Harness, release: threading.Event
) -> None:
    h.limits = replace(h.limits, wall_time=0.2, tool_timeout=30)
    h.tool("blocks", lambda value, context: release.wait(10) and "too late")
    run_id = h.run(graph(ToolNode("t", "blocks")))
    assert h.last(run_id)[1] == {
        "error": "the run has been running for more than 0.2 s (GATEHOUSE_RUN_WALL_TIME)",
        "code": "limit_exceeded",
        "node": "t",
    }


def test_a_model_call_may_take_only_what_is_left_of_the_wall_time(
    h: Harness, release: threading.Event
) -> None:
    h.limits = replace(h.limits, wall_time=0.2, model_timeout=120)
    h.providers.extra["scripted"] = Recorder(lambda request: release.wait(10) and ModelReply("x"))
    run_id = h.run(graph(AgentNode("a", h.scripted("x"))))
    assert h.last(run_id)[1] == {
        "error": "the run has been running for more than 0.2 s (GATEHOUSE_RUN_WALL_TIME)",
        "code": "limit_exceeded",
        "node": "a",
    }


# --- the default step budget ---------------------------------------------------------------


def test_an_agent_without_a_step_budget_gets_the_installations(h: Harness) -> None:
    """Found: an agent whose definition set no `max_steps` could loop for as long as its model
    kept asking for tools."""
    h.limits = replace(h.limits, agent_max_steps=3)
    agent = h.scripted(*[tool_call("echo")] * 10, '"done"', tools=["echo"])
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.state(run_id) == "budget_exceeded"
    assert h.last(run_id) == (
        "BudgetExceeded",
        {"node": "a", "budget": {"kind": "steps", "limit": 3}, "observed": 3},
    )
    # an operator raises it, as any budget
    h.resume(run_id, {"limit": 20})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == "done"


def test_an_agents_own_step_budget_wins_over_the_default(h: Harness) -> None:
    h.limits = replace(h.limits, agent_max_steps=2)
    agent = h.scripted(*[tool_call("echo")] * 3, '"done"', tools=["echo"], budget={"max_steps": 9})
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.output(run_id) == "done"
