"""Tool nodes (spec 04, *Node kinds*): events, input building, schemas, failures."""

from __future__ import annotations

from typing import Any

from editor.engine import ToolContext, ToolEffect, ToolError
from editor.graph.model import ToolNode
from tests.unit.engine.harness import Harness, graph, tool_key


def test_a_tool_node_records_its_call_and_its_output(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "echo")), {"a": 1})
    key = tool_key(run_id, "t")
    assert h.events(run_id) == [
        ("NodeEntered", {"node": "t"}),
        (
            "ToolCallRequested",
            {
                "node": "t",
                "tool": "echo",
                "input": {"a": 1},
                "effect": "read",
                "idempotency_key": key,
                "call": 0,
            },
        ),
        ("ToolCallCompleted", {"node": "t", "tool": "echo", "output": {"a": 1}, "call": 0}),
        ("NodeExited", {"node": "t", "output": {"a": 1}}),
        ("RunCompleted", {"output": {"a": 1}}),
    ]
    assert h.state(run_id) == "completed"


def test_the_input_is_built_field_by_field_from_references(h: Harness) -> None:
    seen: list[Any] = []
    h.tool("spy", lambda value, context: seen.append(value) or "ok")
    document = graph(ToolNode("t", "spy", input={"who": "user.name", "first": "items.0"}))
    run_id = h.run(document, {"user": {"name": "Ada"}, "items": ["tea", "cake"]})
    assert seen == [{"who": "Ada", "first": "tea"}]
    assert h.of(run_id, "ToolCallRequested")[0]["input"] == {"who": "Ada", "first": "tea"}


def test_the_tool_gets_a_context_with_the_idempotency_key(h: Harness) -> None:
    contexts: list[ToolContext] = []
    h.tool("spy", lambda value, context: contexts.append(context))
    run_id = h.run(graph(ToolNode("t", "spy")))
    assert contexts == [ToolContext(run_id, "t", tool_key(run_id, "t"), h.limits.tool_timeout)]


def test_the_idempotency_key_differs_between_runs(h: Harness) -> None:
    document = graph(ToolNode("t", "echo"))
    first, second = h.run(document), h.run(document)
    keys = [h.of(run, "ToolCallRequested")[0]["idempotency_key"] for run in (first, second)]
    assert keys == [tool_key(first, "t"), tool_key(second, "t")]
    assert keys[0] != keys[1]


def test_the_effect_of_the_tool_is_recorded(h: Harness) -> None:
    h.tool("send", lambda value, context: "sent", effect=ToolEffect.WRITE)
    run_id = h.run(graph(ToolNode("t", "send")))
    assert h.of(run_id, "ToolCallRequested")[0]["effect"] == "write"
    assert h.output(run_id) == "sent"


def test_a_missing_input_reference_fails_after_node_entered(h: Harness) -> None:
    document = graph(ToolNode("t", "echo", input={"text": "draft.body"}))
    run_id = h.run(document, {"draft": {}})
    assert h.events(run_id) == [
        ("NodeEntered", {"node": "t"}),
        (
            "RunFailed",
            {
                "error": "tool node `t`: the input reference `draft.body` for `text` is missing",
                "node": "t",
            },
        ),
    ]
    assert h.state(run_id) == "failed"


def test_a_failing_tool_fails_the_run_with_the_exact_message(h: Harness) -> None:
    def boom(value: Any, context: ToolContext) -> Any:
        raise ToolError("the printer is on fire")

    h.tool("boom", boom)
    run_id = h.run(graph(ToolNode("t", "boom")))
    assert h.kinds(run_id) == ["GraphRunStarted", "NodeEntered", "ToolCallRequested", "RunFailed"]
    assert h.last(run_id) == (
        "RunFailed",
        {"error": "tool node `t` failed: the printer is on fire", "node": "t"},
    )
    assert h.store.status(run_id) == {
        "state": "failed",
        "error": "tool node `t` failed: the printer is on fire",
    }


def test_any_exception_from_a_tool_fails_the_call(h: Harness) -> None:
    def broken(value: Any, context: ToolContext) -> Any:
        raise ValueError("bad value")

    h.tool("broken", broken)
    run_id = h.run(graph(ToolNode("t", "broken")))
    assert h.error(run_id) == "tool node `t` failed: bad value"


def test_the_declared_input_schema_is_checked_on_the_way_in(h: Harness) -> None:
    calls: list[Any] = []
    h.tool("spy", lambda value, context: calls.append(value))
    document = graph(
        ToolNode(
            "t",
            "spy",
            input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        )
    )
    run_id = h.run(document, {"n": "x"})
    assert h.error(run_id) == (
        "tool node `t`: its input does not match its input_schema: "
        "$.n: 'x' is not of type 'integer'"
    )
    assert calls == []
    assert h.of(run_id, "ToolCallRequested") == []


def test_the_declared_output_schema_is_checked_on_the_way_out(h: Harness) -> None:
    document = graph(ToolNode("t", "echo", output_schema={"type": "array"}))
    run_id = h.run(document, {"a": 1})
    assert h.kinds(run_id)[-2:] == ["ToolCallCompleted", "RunFailed"]
    assert h.error(run_id) == (
        "tool node `t`: its output does not match its output_schema: $: {'a': 1} is not of type "
        "'array'"
    )


def test_matching_declared_schemas_pass(h: Harness) -> None:
    document = graph(
        ToolNode("t", "echo", input_schema={"type": "integer"}, output_schema={"type": "integer"})
    )
    assert h.output(h.run(document, 3)) == 3


def test_the_registered_tool_schemas_are_checked_too(h: Harness) -> None:
    h.tool(
        "strict",
        lambda value, context: "not a number",
        input_schema={"type": "string"},
        output_schema={"type": "number"},
    )
    run_id = h.run(graph(ToolNode("t", "strict")), 5)
    assert h.error(run_id) == (
        "tool node `t` failed: the input does not match the tool's input schema: "
        "$: 5 is not of type 'string'"
    )
    run_id = h.run(graph(ToolNode("t", "strict")), "fine")
    assert h.error(run_id) == (
        "tool node `t` failed: its answer does not match the tool's output schema: "
        "$: 'not a number' is not of type 'number'"
    )


def test_a_chain_of_tools_passes_outputs_along(h: Harness) -> None:
    h.tool("inc", lambda value, context: value + 1)
    document = graph(
        ToolNode("a", "inc"),
        ToolNode("b", "inc"),
        ToolNode("c", "inc"),
        edges=[("a", "b"), ("b", "c")],
    )
    run_id = h.run(document, 0)
    assert [p["output"] for p in h.of(run_id, "NodeExited")] == [1, 2, 3]
    assert h.output(run_id) == 3


def test_an_unknown_tool_fails_the_run_before_anything_runs(h: Harness) -> None:
    run_id = h.run(graph(ToolNode("t", "ech")))
    assert h.events(run_id) == [
        (
            "RunFailed",
            {
                "error": "tool node `t`: no tool registered under the name `ech` "
                "(did you mean `echo`?)",
                "code": "unknown_tool",
            },
        )
    ]
