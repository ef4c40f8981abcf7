"""A tool's declared idempotency key (an MCP catalogue's ``idempotency_keys``): the call's
recorded key, and one execution across runs (the reference's ``claim_call``)."""

from __future__ import annotations

from typing import Any

from editor.engine import ToolContext, ToolEffect, ToolError
from editor.engine.ports import ToolSpec
from editor.graph.model import ToolNode
from tests.unit.engine.harness import Harness, graph


def keyed_tool(h: Harness, effect: ToolEffect = ToolEffect.WRITE) -> list[Any]:
    """``pay``: records each input it runs on, keyed by its input's ``claim``."""
    ran: list[Any] = []

    def pay(value: Any, context: ToolContext) -> Any:
        ran.append((value, context.idempotency_key))
        return {"paid": value["claim"]}

    def key(value: Any) -> str:
        if not isinstance(value, dict) or "claim" not in value:
            raise ToolError("no `claim` in the input")
        return f"pay:{value['claim']}"

    h.tools.register(ToolSpec("pay", "pays a claim", pay, effect, declared_key=key))
    return ran


def test_the_declared_key_is_the_calls_key_and_a_second_run_copies_the_first(
    h: Harness,
) -> None:
    ran = keyed_tool(h)
    first = h.run(graph(ToolNode("p", "pay")), {"claim": "wreck-9931"})
    second = h.run(graph(ToolNode("p", "pay")), {"claim": "wreck-9931"})

    assert (h.state(first), h.state(second)) == ("completed", "completed")
    assert ran == [({"claim": "wreck-9931"}, "pay:wreck-9931")]  # executed once
    copied = [e.payload for e in h.store.events[second] if e.kind == "ToolCallCompleted"]
    assert copied == [
        {"node": "p", "tool": "pay", "output": {"paid": "wreck-9931"}, "call": 0,
         "deduplicated_from": first}
    ]  # fmt: skip


def test_another_claim_runs_again(h: Harness) -> None:
    ran = keyed_tool(h)
    h.run(graph(ToolNode("p", "pay")), {"claim": "a"})
    h.run(graph(ToolNode("p", "pay")), {"claim": "b"})

    assert [value for value, _ in ran] == [{"claim": "a"}, {"claim": "b"}]


def test_one_key_over_another_input_fails_the_second_run(h: Harness) -> None:
    keyed_tool(h)
    first = h.run(graph(ToolNode("p", "pay")), {"claim": "a", "amount": 1})
    second = h.run(graph(ToolNode("p", "pay")), {"claim": "a", "amount": 2})

    assert h.state(second) == "failed"
    assert (
        f"the idempotency key `pay:a` already names another call (in run {first}"
        in (h.store.status(second)["error"])
    )


def test_a_read_tool_with_a_declared_key_is_not_deduplicated(h: Harness) -> None:
    ran = keyed_tool(h, ToolEffect.READ)
    h.run(graph(ToolNode("p", "pay")), {"claim": "a"})
    h.run(graph(ToolNode("p", "pay")), {"claim": "a"})

    assert len(ran) == 2


def test_a_call_without_its_declared_key_is_refused_before_it_is_requested(h: Harness) -> None:
    ran = keyed_tool(h)
    run_id = h.run(graph(ToolNode("p", "pay")), {"amount": 1})

    assert h.state(run_id) == "failed"
    assert "no `claim` in the input" in h.store.status(run_id)["error"]
    assert "ToolCallRequested" not in h.kinds(run_id)
    assert ran == []
