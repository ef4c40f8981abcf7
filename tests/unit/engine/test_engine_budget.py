"""Agent budgets (spec 04, *agent*): BudgetExceeded parks the run; BudgetRaised continues it."""

from __future__ import annotations

import json

import pytest

from editor.engine import InvalidResumeInput
from editor.graph.model import AgentNode, BranchCase, BranchNode, ModelDecision, ToolNode
from tests.unit.engine.harness import Harness, graph


def tool_call() -> str:
    return json.dumps({"tool_calls": [{"name": "echo", "arguments": {"n": 1}}]})


def test_max_steps_parks_the_run_before_the_next_model_call(h: Harness) -> None:
    agent = h.scripted(tool_call(), tool_call(), '"done"', tools=["echo"], budget={"max_steps": 1})
    run_id = h.start(graph(AgentNode("a", agent)))
    assert h.drive(run_id) == "budget_exceeded"
    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "ToolCallRequested",
        "ToolCallCompleted",
        "BudgetExceeded",
    ]
    assert h.last(run_id) == (
        "BudgetExceeded",
        {"node": "a", "budget": {"kind": "steps", "limit": 1}, "observed": 1},
    )
    status = h.store.status(run_id)
    assert (status["state"], status["budget"], status["observed"]) == (
        "budget_exceeded",
        {"kind": "steps", "limit": 1},
        1,
    )
    # raise it once: the next call is made, then the limit is hit again
    assert h.resume(run_id, {"limit": 2}, by="dora") == {
        "node": "a",
        "kind": "steps",
        "limit": 2,
        "by": "dora",
    }
    assert h.state(run_id) == "running"
    assert h.drive(run_id) == "budget_exceeded"
    assert h.last(run_id)[1] == {
        "node": "a",
        "budget": {"kind": "steps", "limit": 2},
        "observed": 2,
    }
    h.resume(run_id, {"limit": 3})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == "done"
    assert h.kinds(run_id).count("NodeEntered") == 1
    assert h.kinds(run_id).count("ModelCallRequested") == 3
    assert h.kinds(run_id).count("ToolCallRequested") == 2


def test_max_tokens_parks_the_run_with_what_was_used(h: Harness) -> None:
    agent = h.scripted(tool_call(), '"done"', tools=["echo"], budget={"max_tokens": 5})
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.state(run_id) == "budget_exceeded"
    # parked as soon as the usage is known: the tool call it asked for is not made yet
    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "BudgetExceeded",
    ]
    (usage,) = [p["usage"] for p in h.of(run_id, "ModelCallCompleted")]
    used = usage["input_tokens"] + usage["output_tokens"]
    assert used > 5
    kind, payload = h.last(run_id)
    assert (kind, payload) == (
        "BudgetExceeded",
        {"node": "a", "budget": {"kind": "tokens", "limit": 5}, "observed": used},
    )
    h.resume(run_id, {"limit": 10_000})
    assert h.drive(run_id) == "completed"
    assert h.kinds(run_id)[5:] == [
        "BudgetRaised",
        "ToolCallRequested",
        "ToolCallCompleted",
        "ModelCallRequested",
        "ModelCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    assert h.output(run_id) == "done"
    assert h.of(run_id, "BudgetRaised")[0]["kind"] == "tokens"


def test_a_final_reply_over_the_token_budget_parks_too(h: Harness) -> None:
    agent = h.scripted('"a rather long final answer"', budget={"max_tokens": 1})
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.state(run_id) == "budget_exceeded"
    h.resume(run_id, {"limit": 1000})
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == "a rather long final answer"
    assert h.kinds(run_id).count("ModelCallRequested") == 1


@pytest.mark.parametrize("limit", [1, 0, -3, "5", 2.5, True, None])
def test_a_limit_not_above_what_was_observed_is_refused(h: Harness, limit: object) -> None:
    agent = h.scripted(tool_call(), '"done"', tools=["echo"], budget={"max_steps": 1})
    run_id = h.run(graph(AgentNode("a", agent)))
    before = list(h.store.events[run_id])
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, {"limit": limit})
    assert raised.value.violations == [
        {
            "path": "$.limit",
            "message": "the new limit must be an integer above what was observed (1)",
        }
    ]
    assert h.store.events[run_id] == before
    assert h.state(run_id) == "budget_exceeded"


def test_a_decision_agent_over_budget_parks_and_then_decides(h: Harness) -> None:
    agent = h.scripted(tool_call(), "left", tools=["echo"], budget={"max_steps": 1})
    branch = BranchNode(
        "b",
        (BranchCase("left", ModelDecision()), BranchCase("right", ModelDecision())),
        agent_hash=agent,
    )
    document = graph(
        branch,
        ToolNode("l", "echo"),
        ToolNode("r", "echo"),
        edges=[("b", "l", "left"), ("b", "r", "right")],
    )
    run_id = h.run(document, {"q": 1})
    assert h.state(run_id) == "budget_exceeded"
    assert h.of(run_id, "BranchTaken") == []
    h.resume(run_id, {"limit": 2})
    assert h.drive(run_id) == "completed"
    assert h.of(run_id, "BranchTaken") == [{"node": "b", "case": "left"}]
    assert h.output(run_id) == {"q": 1}
