"""Re-driving after a crash, reconciling interrupted writes, losing the run (spec 04,
*Durability*)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from editor.engine import InvalidResumeInput, ToolContext, ToolEffect, run_status
from editor.graph import hash_value
from editor.graph.model import AgentNode, FoldNode, JoinLast, MapNode, NodeBody, ToolNode
from tests.unit.engine.harness import Harness, graph, tool_key


class Crash(BaseException):
    """The worker process dies: nothing after it is recorded."""


class Flaky:
    """A tool that crashes the worker on its first ``crashes`` calls, then answers."""

    def __init__(self, crashes: int = 1, answer: Any = "done") -> None:
        self.crashes = crashes
        self.answer = answer
        self.keys: list[str] = []

    def __call__(self, value: Any, context: ToolContext) -> Any:
        self.keys.append(context.idempotency_key)
        if len(self.keys) <= self.crashes:
            raise Crash
        return self.answer


def crash_drive(h: Harness, run_id: str) -> None:
    with pytest.raises(Crash):
        h.drive(run_id)


@pytest.mark.parametrize("effect", [ToolEffect.READ, ToolEffect.IDEMPOTENT])
def test_an_interrupted_call_is_reissued_with_the_same_key(h: Harness, effect: ToolEffect) -> None:
    flaky = Flaky()
    h.tool("flaky", flaky, effect=effect)
    document = graph(ToolNode("a", "echo"), ToolNode("t", "flaky"), edges=[("a", "t")])
    run_id = h.start(document, 1)
    crash_drive(h, run_id)
    assert h.kinds(run_id)[-2:] == ["NodeEntered", "ToolCallRequested"]
    assert h.state(run_id) == "running"
    assert h.drive(run_id) == "completed"
    assert flaky.keys == [tool_key(run_id, "t")] * 2
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]
    assert h.output(run_id) == "done"


def test_a_re_drive_of_a_truncated_log_continues_after_the_last_event(h: Harness) -> None:
    calls: list[Any] = []
    h.tool("count", lambda value, context: calls.append(value) or len(calls))
    document = graph(ToolNode("a", "count"), ToolNode("b", "count"), edges=[("a", "b")])
    run_id = h.run(document, "x")
    complete = list(h.store.events[run_id])
    # cut the log right after b's ToolCallRequested: the worker died during b's call
    cut = [e.kind for e in complete].index("ToolCallRequested", 3) + 1
    h.store.events[run_id] = complete[:cut]
    h.store.runs[run_id]["status"] = {"state": "running"}
    assert h.drive(run_id) == "completed"
    after = h.store.events[run_id]
    assert [e.kind for e in after] == [e.kind for e in complete]
    assert [(e.seq, e.kind) for e in after[:cut]] == [(e.seq, e.kind) for e in complete[:cut]]
    # a ran once, b twice (re-issued), each time with b's key
    assert calls == ["x", 1, 1]
    assert after[-1].payload == {"output": 3}


def test_an_interrupted_model_call_is_reissued_and_not_recorded_again(h: Harness) -> None:
    agent = h.scripted('"hello"')
    document = graph(AgentNode("a", agent))
    run_id = h.run(document)
    complete = list(h.store.events[run_id])
    cut = [e.kind for e in complete].index("ModelCallRequested") + 1
    h.store.events[run_id] = complete[:cut]
    h.store.runs[run_id]["status"] = run_status(complete[:cut])
    assert h.drive(run_id) == "completed"
    assert [e.kind for e in h.store.events[run_id]] == [e.kind for e in complete]
    assert h.of(run_id, "ModelCallRequested") == [complete[cut - 1].payload]


def test_an_interrupted_agent_tool_call_is_reissued_inside_the_loop(h: Harness) -> None:
    flaky = Flaky(answer={"sunny": True})
    h.tool("weather", flaky)
    reply = json.dumps({"tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}]})
    agent = h.scripted(reply, '"ok"', tools=["weather"])
    run_id = h.start(graph(AgentNode("a", agent)))
    crash_drive(h, run_id)
    assert h.drive(run_id) == "completed"
    assert flaky.keys == [tool_key(run_id, "a")] * 2
    assert h.kinds(run_id).count("ToolCallRequested") == 1
    assert h.kinds(run_id).count("ModelCallRequested") == 2
    assert h.kinds(run_id).count("NodeEntered") == 1


def test_a_crash_inside_a_map_item_re_drives_only_what_is_missing(h: Harness) -> None:
    calls: list[Any] = []

    def tool(value: Any, context: ToolContext) -> Any:
        calls.append(value)
        if value == 1 and calls.count(1) == 1:
            raise Crash
        return value * 10

    h.tool("once", tool)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "once")
    )
    run_id = h.start(document, {"items": [0, 1, 2]})
    crash_drive(h, run_id)
    assert h.drive(run_id) == "completed"
    assert calls == [0, 1, 1, 2]
    assert h.output(run_id) == [0, 10, 20]
    assert [p["index"] for p in h.of(run_id, "MapIterationStarted")] == [0, 1, 2]
    assert h.kinds(run_id).count("MapFannedOut") == 1
    entered = [(p["node"], p.get("scope")) for p in h.of(run_id, "NodeEntered")]
    assert entered == [
        ("m", None),
        ("each", [["m", 0]]),
        ("each", [["m", 1]]),
        ("each", [["m", 2]]),
    ]


def test_a_crash_inside_a_fold_pass_re_drives_the_pass(h: Harness) -> None:
    calls: list[Any] = []

    def tool(value: Any, context: ToolContext) -> Any:
        calls.append(value)
        if len(calls) == 2:
            raise Crash
        return value + 1

    h.tool("inc", tool)
    document = graph(
        FoldNode(
            "f", body=NodeBody("s"), max_iterations=3, stop_when="false == true", join=JoinLast()
        ),
        ToolNode("s", "inc"),
    )
    run_id = h.start(document, 0)
    crash_drive(h, run_id)
    assert h.drive(run_id) == "completed"
    assert calls == [0, 1, 1, 2]
    assert h.output(run_id) == 3
    assert [p["index"] for p in h.of(run_id, "FoldIterationStarted")] == [0, 1, 2]


def write_run(h: Harness) -> tuple[str, Flaky]:
    flaky = Flaky(answer="sent")
    h.tool("send", flaky, effect=ToolEffect.WRITE)
    document = graph(ToolNode("t", "send"), ToolNode("after", "echo"), edges=[("t", "after")])
    run_id = h.start(document, {"to": "x"})
    crash_drive(h, run_id)
    return run_id, flaky


def test_an_interrupted_write_parks_for_reconciliation_and_is_not_rerun(h: Harness) -> None:
    run_id, flaky = write_run(h)
    assert h.drive(run_id) == "needs_reconciliation"
    assert len(flaky.keys) == 1
    assert h.last(run_id) == (
        "ReconciliationNeeded",
        {
            "node": "t",
            "tool": "send",
            "call": 0,
            "input": {"to": "x"},
            "idempotency_key": tool_key(run_id, "t"),
        },
    )
    status = h.store.status(run_id)
    assert (status["state"], status["node"], status["tool"]) == (
        "needs_reconciliation",
        "t",
        "send",
    )
    # driving again changes nothing
    count = len(h.kinds(run_id))
    assert h.drive(run_id) == "needs_reconciliation"
    assert len(h.kinds(run_id)) == count
    assert len(flaky.keys) == 1


def test_a_reconciled_output_continues_the_run_without_calling_the_tool(h: Harness) -> None:
    run_id, flaky = write_run(h)
    h.drive(run_id)
    assert h.resume(run_id, {"output": "sent by hand"}, by="erin") == {
        "node": "t",
        "call": 0,
        "by": "erin",
        "output": "sent by hand",
    }
    assert h.state(run_id) == "running"
    assert h.drive(run_id) == "completed"
    assert len(flaky.keys) == 1
    assert h.of(run_id, "NodeExited")[0] == {"node": "t", "output": "sent by hand"}
    assert h.output(run_id) == "sent by hand"


def test_a_reconciliation_retry_runs_the_call_again_with_the_same_key(h: Harness) -> None:
    run_id, flaky = write_run(h)
    h.drive(run_id)
    assert h.resume(run_id, {"retry": True}) == {"node": "t", "call": 0, "by": "bob", "retry": True}
    assert h.drive(run_id) == "completed"
    assert flaky.keys == [tool_key(run_id, "t")] * 2
    # the retry is on record as a fresh request (same call, same key) before it is made
    assert h.kinds(run_id)[1:7] == [
        "NodeEntered",
        "ToolCallRequested",
        "ReconciliationNeeded",
        "Reconciled",
        "ToolCallRequested",
        "ToolCallCompleted",
    ]
    first, again = h.of(run_id, "ToolCallRequested")[:2]
    assert first == again
    assert h.of(run_id, "ToolCallCompleted")[0]["output"] == "sent"
    assert h.output(run_id) == "sent"


def test_a_retried_write_interrupted_again_parks_again(h: Harness) -> None:
    run_id, flaky = write_run(h)
    flaky.crashes = 2
    h.drive(run_id)
    h.resume(run_id, {"retry": True})
    crash_drive(h, run_id)  # the retry dies too: its outcome is unknown again
    assert len(flaky.keys) == 2
    assert h.drive(run_id) == "needs_reconciliation"
    assert len(flaky.keys) == 2
    assert h.kinds(run_id).count("ReconciliationNeeded") == 2
    h.resume(run_id, {"output": "checked by hand"})
    assert h.drive(run_id) == "completed"
    assert len(flaky.keys) == 2
    assert h.output(run_id) == "checked by hand"


@pytest.mark.parametrize("body", [{}, {"retry": False}, {"output": 1, "retry": True}, "x"])
def test_a_reconciliation_needs_an_output_or_a_retry(h: Harness, body: Any) -> None:
    run_id, _ = write_run(h)
    h.drive(run_id)
    with pytest.raises(InvalidResumeInput) as raised:
        h.resume(run_id, body)
    assert raised.value.violations == [
        {"path": "$", "message": 'give either {"output": …} or {"retry": true}'}
    ]


def test_a_completed_write_is_not_reconciled(h: Harness) -> None:
    h.tool("send", lambda value, context: "sent", effect=ToolEffect.WRITE)
    run_id = h.run(graph(ToolNode("t", "send")))
    assert h.output(run_id) == "sent"
    assert "ReconciliationNeeded" not in h.kinds(run_id)


def test_an_abandon_between_steps_stops_the_drive_without_writing(h: Harness) -> None:
    run_ids: list[str] = []
    calls: list[Any] = []

    def abandon_meanwhile(value: Any, context: ToolContext) -> Any:
        calls.append(value)
        h.abandon(run_ids[0], by="carol", reason="changed my mind")
        return "in-flight result"

    h.tool("slow", abandon_meanwhile)
    document = graph(ToolNode("t", "slow"), ToolNode("after", "echo"), edges=[("t", "after")])
    run_ids.append(h.start(document, 1))
    run_id = run_ids[0]
    assert h.drive(run_id) == "abandoned"
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ToolCallRequested",
        "RunAbandoned",
    ]
    assert h.last(run_id) == ("RunAbandoned", {"by": "carol", "reason": "changed my mind"})
    assert h.store.status(run_id) == {"state": "abandoned", "reason": "changed my mind"}
    assert calls == [1]
    # a later drive does nothing at all
    assert h.drive(run_id) == "abandoned"
    assert len(h.kinds(run_id)) == 4


def test_a_parked_run_can_be_abandoned(h: Harness) -> None:
    run_id, _ = write_run(h)
    h.drive(run_id)
    h.abandon(run_id)
    assert h.state(run_id) == "abandoned"
    assert h.drive(run_id) == "abandoned"


def test_the_model_call_key_is_stable_across_a_re_drive(h: Harness) -> None:
    keys: list[str] = []
    scripted = h.providers.builtin.provider_for("scripted")

    class Dying:
        def complete(self, request: Any) -> Any:
            keys.append(request.idempotency_key)
            if len(keys) == 1:
                raise Crash
            return scripted.complete(request)

    h.providers.extra["scripted"] = Dying()
    run_id = h.start(graph(AgentNode("a", h.scripted('"x"'))))
    crash_drive(h, run_id)
    assert h.drive(run_id) == "completed"
    assert keys == [hash_value({"run": run_id, "node": "a", "scope": [], "model_call": 0})] * 2


def test_an_interrupted_write_inside_an_agent_loop_is_reconciled(h: Harness) -> None:
    flaky = Flaky(answer="never used")
    h.tool("send", flaky, effect=ToolEffect.WRITE)
    reply = json.dumps({"tool_calls": [{"name": "send", "arguments": {"to": "x"}}]})
    recorder_seen: list[Any] = []
    scripted = h.providers.builtin.provider_for("scripted")

    class Spy:
        def complete(self, request: Any) -> Any:
            recorder_seen.append(request.messages)
            return scripted.complete(request)

    h.providers.extra["scripted"] = Spy()
    agent = h.scripted(reply, '"ok"', tools=["send"])
    run_id = h.start(graph(AgentNode("a", agent)))
    crash_drive(h, run_id)
    assert h.drive(run_id) == "needs_reconciliation"
    assert h.last(run_id)[1]["input"] == {"to": "x"}
    h.resume(run_id, {"output": {"status": "sent by hand"}})
    assert h.drive(run_id) == "completed"
    assert len(flaky.keys) == 1
    # the reconciled output is what the model is told the tool answered
    assert recorder_seen[-1][-1] == {
        "role": "tool",
        "tool_call_id": "call_0_0",
        "content": '{"status":"sent by hand"}',
    }
    assert h.output(run_id) == "ok"


def test_an_interrupted_write_inside_a_map_item_is_reconciled_by_scope(h: Harness) -> None:
    keys: list[str] = []

    def send(value: Any, context: ToolContext) -> Any:
        keys.append(context.idempotency_key)
        if value == 1 and len(keys) == 2:
            raise Crash
        return f"sent {value}"

    h.tool("send", send, effect=ToolEffect.WRITE)
    document = graph(
        MapNode("m", over="items", concurrency=1, body=NodeBody("each")), ToolNode("each", "send")
    )
    run_id = h.start(document, {"items": [0, 1, 2]})
    crash_drive(h, run_id)
    assert h.drive(run_id) == "needs_reconciliation"
    pending = h.store.status(run_id)["pending"]
    assert [(p["node"], p["scope"], p["call"]) for p in pending] == [("each", [["m", 1]], 0)]
    assert h.resume(run_id, {"retry": True}, node="each", scope=[["m", 1]])["scope"] == [["m", 1]]
    assert h.drive(run_id) == "completed"
    assert h.output(run_id) == ["sent 0", "sent 1", "sent 2"]
    # the other items go on while one is parked; the retry reuses item 1's key
    assert keys == [tool_key(run_id, "each", [["m", i]]) for i in (0, 1, 2, 1)]
