"""Cost and wall-time budgets (the reference's ``budgets.cost_usd`` and
``budgets.wall_time_seconds``): they park a run in ``budget_exceeded`` as steps and tokens do,
and a raised limit continues it."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine import (
    InvalidResumeInput,
    Limits,
    ModelReply,
    ModelRequest,
    ToolCall,
    Usage,
)
from editor.graph.model import AgentNode
from tests.unit.engine.harness import FakeClock, Harness, Recorder, graph

MODEL = "claude-test"


def tool_or_done(request: ModelRequest) -> ModelReply:
    """Asks for its one tool twice, then answers; every call reports 1,000 in and 500 out."""
    usage = Usage(1_000, 500)
    if request.cursor < 2:
        name = request.tools[0].name
        return ModelReply(None, (ToolCall(f"t{request.cursor}", name, {"n": 1}),), usage)
    return ModelReply('"done"', (), usage)


def agent(h: Harness, budget: dict[str, Any], tool: str = "echo", **fields: Any) -> str:
    h.providers.extra[MODEL] = Recorder(tool_or_done)
    definition = {"model": MODEL, "prompt": "You help.", "tools": [tool], "budget": budget}
    return h.agents.add({**definition, **fields})


PRICING = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
#: What one call costs at PRICING: 1,000 × 3 / 1e6 + 500 × 15 / 1e6.
ONE_CALL = 0.0105


def test_a_cost_budget_parks_the_run_as_soon_as_a_calls_usage_crosses_it(h: Harness) -> None:
    run_id = h.run(graph(AgentNode("a", agent(h, {"max_cost_usd": 0.015}, pricing=PRICING))))

    assert h.state(run_id) == "budget_exceeded"
    kind, payload = h.last(run_id)
    assert kind == "BudgetExceeded"
    assert payload["budget"] == {"kind": "cost_usd", "limit": 0.015}
    assert payload["observed"] == pytest.approx(2 * ONE_CALL)
    # parked before the tool call the second reply asked for
    assert h.kinds(run_id).count("ToolCallRequested") == 1
    status = h.store.status(run_id)
    assert (status["state"], status["budget"]["kind"]) == ("budget_exceeded", "cost_usd")

    assert h.resume(run_id, {"limit": 0.05}, by="dora")["limit"] == 0.05
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == "done"
    assert h.kinds(run_id).count("ModelCallRequested") == 3


def test_a_cost_limit_is_a_number_above_what_was_spent(h: Harness) -> None:
    run_id = h.run(graph(AgentNode("a", agent(h, {"max_cost_usd": 0.015}, pricing=PRICING))))
    before = list(h.store.events[run_id])

    for limit in (0.01, "1", True, float("inf")):
        with pytest.raises(InvalidResumeInput) as raised:
            h.resume(run_id, {"limit": limit})
        (violation,) = raised.value.violations
        assert violation["message"].startswith("the new limit must be a number above what was")
    assert h.store.events[run_id] == before


def test_wall_time_counts_the_nodes_time_running_and_parks_before_the_next_call(
    h: Harness,
) -> None:
    h.clock = clock = FakeClock()

    def slow_echo(value: Any, context: Any) -> Any:
        clock.advance(10)
        return value

    h.tool("slow_echo", slow_echo)
    run_id = h.run(graph(AgentNode("a", agent(h, {"max_wall_time_seconds": 15}, "slow_echo"))))

    assert h.state(run_id) == "budget_exceeded"
    assert h.last(run_id) == (
        "BudgetExceeded",
        {"node": "a", "budget": {"kind": "wall_time", "limit": 15}, "observed": 20.0},
    )
    assert h.kinds(run_id).count("ModelCallRequested") == 2

    # An hour parked does not count: the wall time is time in `running`.
    clock.advance(3600)
    h.resume(run_id, {"limit": 25.5})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == "done"
    assert h.of(run_id, "BudgetRaised")[0]["kind"] == "wall_time"


def test_a_wall_time_budget_the_calls_stay_within_never_parks(h: Harness) -> None:
    h.clock = FakeClock()
    run_id = h.run(graph(AgentNode("a", agent(h, {"max_wall_time_seconds": 5}))))

    assert h.state(run_id) == "completed"


def test_record_prompts_puts_what_the_model_was_sent_on_each_request(h: Harness) -> None:
    quiet = h.run(graph(AgentNode("a", agent(h, {}))))
    loud = h.run(graph(AgentNode("a", agent(h, {}, record_prompts=True))))

    assert all("request_body" not in p for p in h.of(quiet, "ModelCallRequested"))
    first, second, _ = h.of(loud, "ModelCallRequested")
    assert first["request_body"] == {
        "system": "You help.",
        "messages": [{"role": "user", "content": "null"}],
        "tools": ["echo"],
    }
    assert len(second["request_body"]["messages"]) == 3


def test_the_llm_settings_and_response_size_reach_the_provider(h: Harness) -> None:
    digest = agent(h, {}, llm={"base_url_env": "MODEL_URL"}, max_response_tokens=256)
    h.run(graph(AgentNode("a", digest)))

    request = h.providers.extra[MODEL].requests[0]  # type: ignore[attr-defined]
    assert (request.llm, request.max_response_tokens) == ({"base_url_env": "MODEL_URL"}, 256)


def test_a_recorded_request_too_large_for_an_event_is_left_out_saying_so(h: Harness) -> None:
    h.limits = Limits(max_event_bytes=4096)
    run_id = h.run(graph(AgentNode("a", agent(h, {}, record_prompts=True))), "x" * 3000)

    assert h.state(run_id) == "completed"
    first = h.of(run_id, "ModelCallRequested")[0]
    assert "request_body" not in first
    assert first["request_body_omitted"].endswith("over half of GATEHOUSE_EVENT_MAX_BYTES")
