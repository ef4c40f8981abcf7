"""Agent nodes with an ``output_schema``: the structured loop through ``salvor_answer``
(spec 08, section 4)."""

from __future__ import annotations

import json
from typing import Any

from editor.engine import ANSWER_TOOL, ModelReply, ModelRequest, ToolCall, Usage
from editor.graph import AgentDefinition, Graph, agent_def_hash, parse_document
from editor.graph.model import AgentNode
from tests.reference_examples import needs_examples
from tests.unit.engine.harness import Harness, Recorder, graph
from tests.unit.test_format_0_10 import REFINE

SCORED = {
    "type": "object",
    "required": ["draft", "score"],
    "properties": {"draft": {"type": "string"}, "score": {"type": "number"}},
}


def answer(arguments: Any) -> dict[str, Any]:
    return {"name": ANSWER_TOOL, "arguments": arguments}


def replies(*calls: dict[str, Any]) -> str:
    return json.dumps({"tool_calls": list(calls)})


def model(h: Harness, name: str, provider: Any, tools: tuple[str, ...] = ()) -> str:
    """An agent on a provider of this test (no model name the parser knows: built directly)."""
    h.providers.extra[name] = provider
    definition = AgentDefinition(model=name, prompt="Answer.", tools=tools)
    digest = agent_def_hash(definition)
    h.agents[digest] = definition
    return digest


def test_a_lone_valid_answer_is_the_nodes_output_not_the_reply_text(h: Harness) -> None:
    agent = h.scripted(replies(answer({"draft": "Hello", "score": 0.9})))
    run_id = h.run(graph(AgentNode("a", agent, output_schema=SCORED)))

    assert h.output(run_id) == {"draft": "Hello", "score": 0.9}
    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    # never executed, never recorded as a tool call: its input is in the model's reply
    (completed,) = h.of(run_id, "ModelCallCompleted")
    assert completed["reply"]["tool_calls"][0]["name"] == ANSWER_TOOL


def test_every_call_offers_salvor_answer_with_the_schema_and_forces_a_tool_call(
    h: Harness,
) -> None:
    recorder = Recorder(
        lambda request: ModelReply(
            None, (ToolCall("c1", ANSWER_TOOL, {"draft": "d", "score": 1}),), Usage(1, 1)
        )
    )
    agent = model(h, "recorder", recorder)
    h.run(graph(AgentNode("a", agent, output_schema=SCORED)))

    (request,) = recorder.requests
    assert request.answer_schema == SCORED
    assert request.forces_tool_call


def test_an_agent_without_a_schema_is_not_asked_for_a_structured_answer(h: Harness) -> None:
    recorder = Recorder(lambda request: ModelReply("plain", (), Usage(1, 1)))
    run_id = h.run(graph(AgentNode("a", model(h, "recorder", recorder))))

    assert h.output(run_id) == "plain"
    assert recorder.requests[0].answer_schema is None
    assert not recorder.requests[0].forces_tool_call


def test_a_prose_answer_is_asked_again_and_the_second_answer_is_used(h: Harness) -> None:
    recorder_replies = iter(
        [
            ModelReply("The draft is fine, score 0.9", (), Usage(1, 1)),
            ModelReply(None, (ToolCall("c2", ANSWER_TOOL, {"draft": "d", "score": 0.9}),)),
        ]
    )
    recorder = Recorder(lambda request: next(recorder_replies))
    run_id = h.run(graph(AgentNode("a", model(h, "recorder", recorder), output_schema=SCORED)))

    assert h.output(run_id) == {"draft": "d", "score": 0.9}
    assert h.kinds(run_id).count("ModelCallCompleted") == 2
    second = recorder.requests[1].messages
    assert second[-2] == {"role": "assistant", "content": "The draft is fine, score 0.9"}
    assert second[-1] == {
        "role": "user",
        "content": "answer by calling salvor_answer with an input that matches the required schema",
    }


def test_an_answer_the_schema_refuses_is_fed_back_with_its_violations(h: Harness) -> None:
    agent = h.scripted(
        replies(answer({"draft": "d", "score": "high"})),
        replies(answer({"draft": "d", "score": 0.4})),
    )
    run_id = h.run(graph(AgentNode("a", agent, output_schema=SCORED)))
    assert h.output(run_id) == {"draft": "d", "score": 0.4}

    recorder_replies = iter(
        [
            ModelReply(None, (ToolCall("c1", ANSWER_TOOL, {"score": "high"}),)),
            ModelReply(None, (ToolCall("c2", ANSWER_TOOL, {"draft": "d", "score": 1}),)),
        ]
    )
    recorder = Recorder(lambda request: next(recorder_replies))
    h.run(graph(AgentNode("a", model(h, "recorder", recorder), output_schema=SCORED)))
    assert recorder.requests[1].messages[-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "the salvor_answer input does not match the required schema: "
        "$: 'draft' is a required property; $.score: 'high' is not of type 'number'; "
        "call salvor_answer again with an input that matches it",
    }


def test_an_answer_beside_other_tool_calls_runs_them_and_asks_for_the_answer_alone(
    h: Harness,
) -> None:
    seen: list[Any] = []

    def lookup(value: Any, context: Any) -> Any:
        seen.append(value)
        return {"found": True}

    h.tool("lookup", lookup)
    recorder_replies = iter(
        [
            ModelReply(
                None,
                (
                    ToolCall("c1", "lookup", {"q": 1}),
                    ToolCall("c2", ANSWER_TOOL, {"draft": "early", "score": 1}),
                ),
            ),
            ModelReply(None, (ToolCall("c3", ANSWER_TOOL, {"draft": "late", "score": 1}),)),
        ]
    )
    recorder = Recorder(lambda request: next(recorder_replies))
    agent = model(h, "recorder", recorder, ("lookup",))
    run_id = h.run(graph(AgentNode("a", agent, output_schema=SCORED)))

    assert h.output(run_id) == {"draft": "late", "score": 1}
    assert seen == [{"q": 1}]
    assert [p["tool"] for p in h.of(run_id, "ToolCallCompleted")] == ["lookup"]
    assert recorder.requests[1].messages[-2:] == (
        {"role": "tool", "tool_call_id": "c1", "content": '{"found":true}'},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "call salvor_answer alone: finish the other tool calls first, "
            "then call salvor_answer once with the final answer",
        },
    )


def test_retries_are_model_calls_counted_by_max_steps(h: Harness) -> None:
    agent = h.scripted("prose", "more prose", "still prose", budget={"max_steps": 2})
    run_id = h.run(graph(AgentNode("a", agent, output_schema=SCORED)))

    assert h.state(run_id) == "budget_exceeded"
    assert h.kinds(run_id).count("ModelCallCompleted") == 2
    (exceeded,) = h.of(run_id, "BudgetExceeded")
    assert exceeded["budget"] == {"kind": "steps", "limit": 2}


def test_the_agents_own_schema_is_used_when_its_node_declares_none(h: Harness) -> None:
    graded = {"type": "object", "required": ["grade"]}
    agent = h.agents.add(
        {"model": "scripted", "prompt": "", "output_schema": graded,
         "options": {"replies": [replies(answer({"no": 1})), replies(answer({"grade": 2}))]}}
    )  # fmt: skip
    overruled = h.agents.add(
        {"model": "scripted", "prompt": "", "output_schema": graded,
         "options": {"replies": [replies(answer({"no": 1}))]}}
    )  # fmt: skip

    checked = h.run(graph(AgentNode("a", agent)))
    passed = h.run(graph(AgentNode("a", overruled, output_schema={"type": "object"})))

    assert h.output(checked) == {"grade": 2}
    assert h.output(passed) == {"no": 1}


def test_the_echo_model_answers_with_the_routed_value(h: Harness) -> None:
    agent = h.agent("echo")
    run_id = h.run(graph(AgentNode("a", agent, output_schema={"type": "object"})), {"x": 1})
    assert h.output(run_id) == {"x": 1}
    (completed,) = h.of(run_id, "ModelCallCompleted")
    assert completed["reply"]["tool_calls"][0]["arguments"] == {"x": 1}


def test_a_redrive_replays_the_recorded_rounds_without_asking_the_model_again(
    h: Harness,
) -> None:
    agent = h.scripted(
        "prose", replies(answer({"draft": "d", "score": 0.5}))
    )  # the scripted cursor is the round number: a re-ask would shift it
    run_id = h.run(graph(AgentNode("a", agent, output_schema=SCORED)))
    before = h.kinds(run_id)
    h.drive(run_id)
    assert h.kinds(run_id) == before
    assert h.output(run_id) == {"draft": "d", "score": 0.5}


class Desk:
    """A model that grades drafts as the reference's refine example does: each turn is chosen by
    a text its request's user message contains, and answers through ``salvor_answer``."""

    def __init__(self, turns: dict[str, dict[str, Any]]) -> None:
        self.turns = turns
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        assert request.forces_tool_call and request.answer_schema is not None
        text = request.messages[0]["content"]
        for when, draft in self.turns.items():
            if when in text:
                return ModelReply(None, (ToolCall("tu", ANSWER_TOOL, draft),), Usage(340, 96))
        return ModelReply("no turn matches", (), Usage(1, 1))


def refine(h: Harness, desk: Desk) -> Graph:
    """The reference's refine-notice.json, read where it is, its agent one of this test's."""
    raw = json.loads(REFINE.read_text(encoding="utf-8"))
    raw["nodes"][1]["payload"]["agent_hash"] = model(h, "desk", desk)
    return parse_document(json.dumps(raw))


@needs_examples(REFINE)
def test_the_refine_example_converges_on_the_pass_whose_answer_clears_the_threshold(
    h: Harness,
) -> None:
    desk = Desk(
        {
            "ADJ-7741": {"draft": "Contact the desk. [rev A1]", "score": 0.55},
            "rev A1": {"draft": "Hello R. Vance. [rev A2]", "score": 0.85},
        }
    )
    document = refine(h, desk)
    # pass 1 folds over pass 0's answer: its turn is chosen by the earlier draft's marker
    run_id = h.run(document, json.loads((REFINE.parent / "input.json").read_text()))

    assert h.output(run_id) == {"draft": "Hello R. Vance. [rev A2]", "score": 0.85}
    assert h.of(run_id, "FoldConverged") == [
        {"node": "refine", "winner_index": 1, "reason": "stop_when"}
    ]
    assert h.kinds(run_id).count("FoldIterationStarted") == 2
    assert len(desk.requests) == 2


@needs_examples(REFINE)
def test_the_refine_example_fails_at_its_bound_when_no_answer_clears_it(h: Harness) -> None:
    desk = Desk(
        {
            "rev S3": {"draft": "[rev S4]", "score": 0.61},
            "rev S2": {"draft": "[rev S3]", "score": 0.58},
            "rev S1": {"draft": "[rev S2]", "score": 0.52},
            "": {"draft": "[rev S1]", "score": 0.41},
        }
    )
    run_id = h.run(refine(h, desk), {"notice_id": "ADJ-9001"})

    assert h.state(run_id) == "failed"
    assert h.last(run_id)[1]["code"] == "fold_bound_exceeded"
    assert [p["output"]["score"] for p in h.of(run_id, "NodeExited")] == [0.41, 0.52, 0.58, 0.61]
    assert "FoldConverged" not in h.kinds(run_id)
