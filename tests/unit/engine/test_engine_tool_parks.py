"""Tool results that park a run through ``_meta.salvor`` (spec 08, section 5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from editor.engine import ANSWER_TOOL, run_status
from editor.graph.model import AgentNode, ToolNode
from tests.unit.engine.harness import FakeClock, Harness, graph

START = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
SCHEMA = {"type": "object", "required": ["approved"]}


def parking(h: Harness, salvor: Any, **result: Any) -> Any:
    """A document of one tool whose result carries ``_meta.salvor``, then a tool after it."""
    h.clock = FakeClock(START)
    h.tool("ask", lambda value, context: {"content": [], **result, "_meta": {"salvor": salvor}})
    h.tool("after", lambda value, context: {"after": value})
    return graph(ToolNode("ask", "ask"), ToolNode("after", "after"), edges=[("ask", "after")])


def test_a_suspend_parks_the_run_with_its_reason_and_schema_after_recording_the_call(
    h: Harness,
) -> None:
    run_id = h.run(parking(h, {"suspend": {"reason": "Sign the form", "input_schema": SCHEMA}}))

    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "Suspended",
    ]
    assert h.of(run_id, "Suspended") == [
        {"node": "ask", "reason": "Sign the form", "input_schema": SCHEMA}
    ]
    status = h.store.status(run_id)
    assert status["state"] == "suspended"
    assert "kind" not in status  # a person decides: an ordinary gate card

    h.resume(run_id, {"approved": True})
    h.drive(run_id)
    assert h.output(run_id) == {"after": {"approved": True}}
    assert h.kinds(run_id).count("ToolCallRequested") == 2  # `ask` never ran again


def test_a_signal_suspend_says_kind_signal_on_the_status(h: Harness) -> None:
    salvor = {"suspend": {"reason": "Waiting for the bank", "input_schema": True, "kind": "signal"}}
    run_id = h.run(parking(h, salvor))

    status = h.store.status(run_id)
    assert {k: status[k] for k in ("state", "node", "reason", "input_schema", "kind")} == {
        "state": "suspended",
        "node": "ask",
        "reason": "Waiting for the bank",
        "input_schema": True,
        "kind": "signal",
    }
    assert h.of(run_id, "Suspended")[0]["kind"] == "signal"
    h.resume(run_id, {"paid": 1})
    h.drive(run_id)
    assert h.output(run_id) == {"after": {"paid": 1}}


def test_a_sleep_until_parks_the_run_sleeping_until_that_instant_in_utc(h: Harness) -> None:
    document = parking(h, {"sleep_until": "2026-09-01T14:30:00+02:00"}, structuredContent={"n": 1})
    run_id = h.run(document)

    assert h.store.status(run_id) == {
        "state": "sleeping",
        "wake_at": "2026-09-01T12:30:00.000000Z",
        "node": "ask",
    }
    assert h.clock is not None
    h.clock.advance(29 * 60)
    h.drive(run_id)
    assert h.state(run_id) == "sleeping"  # never early

    h.clock.advance(60)
    h.drive(run_id)
    assert h.kinds(run_id)[4:] == ["SleepStarted", "SleepCompleted", "NodeExited", "NodeEntered",
                                   "ToolCallRequested", "ToolCallCompleted", "NodeExited",
                                   "RunCompleted"]  # fmt: skip
    # the output is the result without _meta.salvor, and _meta dropped once empty
    assert h.of(run_id, "NodeExited")[0]["output"] == {
        "content": [],
        "structuredContent": {"n": 1},
    }


def test_a_sleep_until_already_past_records_both_on_the_same_drive(h: Harness) -> None:
    run_id = h.run(parking(h, {"sleep_until": "2026-01-01T00:00:00Z"}))

    assert h.state(run_id) == "completed"
    assert h.of(run_id, "SleepStarted") == [
        {"node": "ask", "wake_at": "2026-01-01T00:00:00.000000Z"}
    ]
    assert len(h.of(run_id, "SleepCompleted")) == 1
    assert run_status(h.store.events[run_id])["state"] == "completed"


def test_other_meta_keys_stay_in_the_output_after_a_sleep(h: Harness) -> None:
    h.clock = FakeClock(START)
    h.tool(
        "ask",
        lambda value, context: {
            "_meta": {"trace": "t1", "salvor": {"sleep_until": "2026-01-01T00:00:00Z"}}
        },
    )
    run_id = h.run(graph(ToolNode("ask", "ask")))
    assert h.output(run_id) == {"_meta": {"trace": "t1"}}


@pytest.mark.parametrize(
    ("salvor", "message"),
    [
        ("x", "`_meta.salvor` must be a JSON object naming one park request, got the string `x`"),
        (5, "`_meta.salvor` must be a JSON object naming one park request, got the number `5`"),
        (
            {"wait": 1, "later": 2, "suspend": {}},
            "`_meta.salvor` has an unknown key `later`. The only keys are `suspend` and "
            "`sleep_until`",
        ),
        (
            {"suspend": {"reason": "r", "input_schema": {}}, "sleep_until": "2026-01-01T00:00:00Z"},
            "`_meta.salvor` names both `suspend` and `sleep_until`. A run parks one way at a "
            "time: on an input it waits for, or on an instant it waits until",
        ),
        (
            {"suspend": None},
            "`_meta.salvor` names no park request. It must carry exactly one of `suspend` or "
            "`sleep_until`",
        ),
        ({"suspend": []}, "`_meta.salvor.suspend` must be a JSON object, got an array"),
        (
            {"suspend": {"reason": "r", "input_schema": {}, "why": 1}},
            "`_meta.salvor.suspend` has an unknown key `why`. The keys are `reason`, "
            "`input_schema`, and an optional `kind`",
        ),
        (
            {"suspend": {"input_schema": {}}},
            "`_meta.salvor.suspend` is missing `reason`, the line the person or the operator "
            "reads to know what the run is waiting for",
        ),
        (
            {"suspend": {"reason": "  ", "input_schema": {}}},
            "`_meta.salvor.suspend.reason` is empty. A park nobody can explain is a park nobody "
            "can answer",
        ),
        (
            {"suspend": {"reason": True, "input_schema": {}}},
            "`_meta.salvor.suspend.reason` must be a string, got the boolean `true`",
        ),
        (
            {"suspend": {"reason": "r"}},
            "`_meta.salvor.suspend` is missing `input_schema`, the JSON Schema the resume input "
            "is validated against",
        ),
        (
            {"suspend": {"reason": "r", "input_schema": None}},
            "`_meta.salvor.suspend.input_schema` must be a JSON Schema object, got null",
        ),
        (
            {"suspend": {"reason": "r", "input_schema": {}, "kind": "person"}},
            '`_meta.salvor.suspend.kind` must be `"signal"` when present, got the string '
            "`person`. Omit it for the ordinary case, a person deciding",
        ),
        (
            {"sleep_until": 3600},
            "`_meta.salvor.sleep_until` must be an RFC 3339 timestamp string, got the number "
            "`3600`",
        ),
    ],
)
def test_a_malformed_park_request_fails_the_call_naming_what_is_wrong(
    h: Harness, salvor: Any, message: str
) -> None:
    run_id = h.run(parking(h, salvor))
    assert h.error(run_id) == f"tool node `ask` failed: {message}"
    assert "NodeExited" not in h.kinds(run_id)


@pytest.mark.parametrize("text", ["PT1H", "3600s", "2026-09-01T12:00:00", "tomorrow"])
def test_a_sleep_until_that_is_not_an_instant_is_refused_as_a_duration_would_be(
    h: Harness, text: str
) -> None:
    run_id = h.run(parking(h, {"sleep_until": text}))
    error = h.error(run_id)
    assert error.startswith(
        "tool node `ask` failed: `_meta.salvor.sleep_until` is not an RFC 3339 timestamp: "
        f"`{text}` ("
    )
    assert error.endswith(
        "). A duration is not accepted here: the server holds the clock and states the instant"
    )


def test_a_park_on_a_result_flagged_is_error_fails_the_call(h: Harness) -> None:
    run_id = h.run(parking(h, {"sleep_until": "2026-01-01T00:00:00Z"}, isError=True))
    assert h.error(run_id) == (
        "tool node `ask` failed: `_meta.salvor` asks to park the run on a result flagged "
        "`isError`. A call that failed parks nothing: return the park on a successful result, "
        "or drop the `_meta.salvor` key and let the failure stand"
    )


def test_a_result_with_a_null_salvor_is_an_ordinary_result(h: Harness) -> None:
    run_id = h.run(parking(h, None))
    assert h.output(run_id) == {"after": {"content": [], "_meta": {"salvor": None}}}


def test_a_park_asked_by_a_tool_inside_an_agent_loop_fails_the_call(h: Harness) -> None:
    parking(h, {"sleep_until": "2026-01-01T00:00:00Z"})
    agent = h.scripted('{"tool_calls": [{"name": "ask", "arguments": {}}]}', tools=["ask"])
    run_id = h.run(graph(AgentNode("a", agent)))
    assert h.error(run_id) == (
        "agent node `a`: the tool `ask` failed: _meta.salvor parks are honoured on tool nodes only"
    )
    assert ANSWER_TOOL == "salvor_answer"
