"""Agent nodes (spec 04, *Node kinds*): the loop, tool calls, output, failures."""

from __future__ import annotations

import json
from typing import Any

from editor.engine import ModelReply, ModelRequest, ProviderError, ToolContext, ToolError, Usage
from editor.graph import AgentDefinition, agent_def_hash, hash_value
from editor.graph.model import AgentNode
from tests.unit.engine.harness import Harness, Recorder, graph, tool_key


def calls(*calls: tuple[str, Any]) -> str:
    return json.dumps({"tool_calls": [{"name": n, "arguments": a} for n, a in calls]})


def test_an_echo_agent_replies_with_the_routed_value(h: Harness) -> None:
    agent = h.agent("echo", "Repeat.")
    run_id = h.run(graph(AgentNode("a", agent)), {"x": [1, "é"]})
    model_key = hash_value({"run": run_id, "node": "a", "scope": [], "model_call": 0})
    events = h.events(run_id)
    assert [kind for kind, _ in events] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    assert events[1] == (
        "ModelCallRequested",
        {"node": "a", "model": "echo", "call": 0, "idempotency_key": model_key},
    )
    completed = events[2][1]
    assert completed["reply"] == {"content": '{"x":[1,"é"]}', "tool_calls": []}
    assert set(completed["usage"]) == {"input_tokens", "output_tokens"}
    # the reply is valid JSON: the output is the parsed value
    assert events[3] == ("NodeExited", {"node": "a", "output": {"x": [1, "é"]}})
    assert h.output(run_id) == {"x": [1, "é"]}


def test_the_request_carries_the_prompt_the_compact_value_and_the_offered_tools(
    h: Harness,
) -> None:
    recorder = Recorder(lambda request: ModelReply("done", (), Usage(3, 4)))
    h.providers.extra["recorder"] = recorder
    h.tool("lookup", lambda value, context: value, input_schema={"type": "object"})
    # `recorder` is no model name parse_agent_definition knows: build the definition directly
    definition = AgentDefinition(model="recorder", prompt="Be brief.", tools=("lookup", "echo"))
    digest = agent_def_hash(definition)
    h.agents[digest] = definition
    run_id = h.run(graph(AgentNode("a", digest)), {"b": 1, "a": [True, None]})
    (request,) = recorder.requests
    assert request.model == "recorder"
    assert request.system == "Be brief."
    assert request.messages == ({"role": "user", "content": '{"b":1,"a":[true,null]}'},)
    assert [tool.name for tool in request.tools] == ["lookup", "echo"]
    assert request.tools[0].input_schema == {"type": "object"}
    assert request.cursor == 0
    assert request.idempotency_key == hash_value(
        {"run": run_id, "node": "a", "scope": [], "model_call": 0}
    )
    assert request.timeout == h.limits.model_timeout
    # a reply that is not JSON is the output as it is
    assert h.output(run_id) == "done"
    assert h.of(run_id, "ModelCallCompleted")[0]["usage"] == {"input_tokens": 3, "output_tokens": 4}


def test_a_scripted_agent_replies_in_order_and_json_replies_are_parsed(h: Harness) -> None:
    agent = h.scripted('{"draft": "hello"}')
    run_id = h.run(graph(AgentNode("a", agent)), "topic")
    assert h.output(run_id) == {"draft": "hello"}


def test_a_scripted_agent_with_no_reply_left_fails(h: Harness) -> None:
    agent = h.scripted(calls(("echo", {"q": 1})), tools=["echo"])  # then nothing left
    run_id = h.run(graph(AgentNode("a", agent)), None)
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "ToolCallRequested",
        "ToolCallCompleted",
        "ModelCallRequested",
        "RunFailed",
    ]
    assert h.error(run_id) == "agent node `a`: the scripted agent has no reply left"


def test_a_provider_error_fails_the_run_with_its_message(h: Harness) -> None:
    def down(request: ModelRequest) -> ModelReply:
        raise ProviderError("the model endpoint answered 503")

    h.providers.extra["scripted"] = Recorder(down)
    agent = h.scripted("never")
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.kinds(run_id)[-2:] == ["ModelCallRequested", "RunFailed"]
    assert h.error(run_id) == "agent node `a`: the model endpoint answered 503"


def test_the_tool_loop_runs_each_call_and_feeds_the_result_back(h: Harness) -> None:
    seen: list[Any] = []
    h.tool("double", lambda value, context: seen.append(value) or value["n"] * 2)
    recorder = Recorder(
        lambda request: h.providers.builtin.provider_for("scripted").complete(request)
    )
    h.providers.extra["scripted"] = recorder
    agent = h.scripted(
        calls(("double", {"n": 2}), ("double", {"n": 5})),
        calls(("echo", {"back": True})),
        '"all done"',
        tools=["double", "echo"],
    )
    run_id = h.run(graph(AgentNode("a", agent)), {"task": "x"})
    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "ToolCallRequested",
        "ToolCallCompleted",
        "ToolCallRequested",
        "ToolCallCompleted",
        "ModelCallRequested",
        "ModelCallCompleted",
        "ToolCallRequested",
        "ToolCallCompleted",
        "ModelCallRequested",
        "ModelCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    assert seen == [{"n": 2}, {"n": 5}]
    requested = h.of(run_id, "ToolCallRequested")
    assert [(p["tool"], p["input"], p["call"]) for p in requested] == [
        ("double", {"n": 2}, 0),
        ("double", {"n": 5}, 1),
        ("echo", {"back": True}, 2),
    ]
    assert [p["idempotency_key"] for p in requested] == [
        tool_key(run_id, "a", call=n) for n in range(3)
    ]
    assert [p["output"] for p in h.of(run_id, "ToolCallCompleted")] == [4, 10, {"back": True}]
    assert [r.cursor for r in recorder.requests] == [0, 1, 2]
    last = recorder.requests[2].messages
    assert last[0] == {"role": "user", "content": '{"task":"x"}'}
    assert last[1]["role"] == "assistant"
    assert [c["name"] for c in last[1]["tool_calls"]] == ["double", "double"]
    assert last[2] == {"role": "tool", "tool_call_id": "call_0_0", "content": "4"}
    assert last[3] == {"role": "tool", "tool_call_id": "call_0_1", "content": "10"}
    assert last[5] == {"role": "tool", "tool_call_id": "call_1_0", "content": '{"back":true}'}
    assert h.output(run_id) == "all done"


def test_a_tool_the_agent_does_not_list_fails_the_run(h: Harness) -> None:
    agent = h.scripted(calls(("echo", {})))
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.error(run_id) == (
        "agent node `a`: the model asked for the tool `echo`, which its agent does not list"
    )


def test_a_failing_tool_in_the_loop_fails_the_run(h: Harness) -> None:
    def boom(value: Any, context: ToolContext) -> Any:
        raise ToolError("no such city")

    h.tool("weather", boom)
    agent = h.scripted(calls(("weather", {"city": "x"})), "done", tools=["weather"])
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.error(run_id) == "agent node `a`: the tool `weather` failed: no such city"


def test_the_declared_input_schema_is_checked(h: Harness) -> None:
    agent = h.agent("echo")
    document = graph(AgentNode("a", agent, input_schema={"type": "object", "required": ["q"]}))
    run_id = h.run(document, {})
    assert h.events(run_id) == [
        ("NodeEntered", {"node": "a"}),
        (
            "RunFailed",
            {
                "error": "agent node `a`: its input does not match its input_schema: "
                "$: 'q' is a required property",
                "node": "a",
            },
        ),
    ]


def test_an_unknown_agent_fails_the_run_before_anything_runs(h: Harness) -> None:
    missing = "sha256:" + "0" * 64
    run_id = h.run(graph(AgentNode("a", missing)))
    assert h.events(run_id) == [
        (
            "RunFailed",
            {
                "error": f"agent node `a`: no agent registered for hash `{missing}`",
                "code": "unknown_agent",
            },
        )
    ]


def test_the_scripted_cursor_is_per_node(h: Harness) -> None:
    agent = h.scripted('"first"', '"second"')
    document = graph(AgentNode("a", agent), AgentNode("b", agent), edges=[("a", "b")])
    run_id = h.run(document)
    assert [p["output"] for p in h.of(run_id, "NodeExited")] == ["first", "first"]
