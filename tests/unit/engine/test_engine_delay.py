"""Delay nodes (spec 08, section 1): the clock read once and recorded, the run resting in
``sleeping`` until its recorded ``wake_at``, never woken early, and the input passed through."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from editor.engine import run_trace
from editor.engine.errors import TransitionRefused
from editor.engine.states import RunState, check_transition
from editor.engine.status import run_status, with_overdue
from editor.engine.transitions import check_append_states
from editor.graph.model import DelayNode, ToolNode
from tests.unit.engine.harness import FakeClock, Harness, graph

START = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def clocked(h: Harness) -> Harness:
    h.clock = FakeClock(START)
    h.tool("assess", lambda value, context: {**value, "assessed": True})
    h.tool("publish", lambda value, context: {**value, "published": True})
    return h


def cooloff(seconds: int = 3600) -> object:
    return graph(
        ToolNode("assess", "assess"),
        DelayNode("cooloff", seconds),
        ToolNode("publish", "publish"),
        edges=[("assess", "cooloff"), ("cooloff", "publish")],
    )


def test_a_run_reaching_a_delay_records_the_clock_and_the_wake_and_sleeps(clocked: Harness) -> None:
    h = clocked
    run_id = h.run(cooloff(), {"id": 7})

    assert h.state(run_id) == "sleeping"
    assert h.kinds(run_id)[-3:] == ["NodeEntered", "NowObserved", "SleepStarted"]
    assert h.of(run_id, "NowObserved") == [{"now": "2026-09-01T12:00:00.000000Z"}]
    assert h.of(run_id, "SleepStarted") == [
        {"node": "cooloff", "wake_at": "2026-09-01T13:00:00.000000Z"}
    ]
    assert h.store.status(run_id) == {
        "state": "sleeping",
        "wake_at": "2026-09-01T13:00:00.000000Z",
        "node": "cooloff",
    }
    assert h.of(run_id, "ToolCallRequested")[0]["tool"] == "assess"
    assert len(h.of(run_id, "ToolCallRequested")) == 1  # publish waits


def test_a_drive_before_wake_at_appends_nothing_and_one_at_it_wakes_the_run(
    clocked: Harness,
) -> None:
    h = clocked
    run_id = h.run(cooloff(), {"id": 7})
    count = len(h.kinds(run_id))

    h.clock.advance(3599.999)
    assert h.drive(run_id) == "sleeping"
    assert len(h.kinds(run_id)) == count  # never early

    h.clock.advance(0.001)
    assert h.drive(run_id) == "completed"
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "NodeEntered",
        "NowObserved",
        "SleepStarted",
        "SleepCompleted",
        "NodeExited",
        "NodeEntered",
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "RunCompleted",
    ]  # the reference's pinned log of assess -> cooloff -> publish
    assert h.of(run_id, "SleepCompleted") == [{"node": "cooloff"}]
    exited = {p["node"]: p["output"] for p in h.of(run_id, "NodeExited")}
    assert exited["cooloff"] == {"id": 7, "assessed": True}  # the input, verbatim
    assert h.output(run_id) == {"id": 7, "assessed": True, "published": True}


def test_a_second_drive_after_the_wake_records_nothing_more(clocked: Harness) -> None:
    h = clocked
    run_id = h.run(cooloff(60), {"id": 1})
    h.clock.advance(61)
    h.drive(run_id)
    log = h.kinds(run_id)

    assert h.drive(run_id) == "completed"
    assert h.kinds(run_id) == log
    assert log.count("SleepCompleted") == 1


def test_the_time_asleep_is_not_run_wall_time(clocked: Harness) -> None:
    h = clocked
    h.limits = dataclasses.replace(h.limits, wall_time=600.0)
    run_id = h.run(cooloff(3600), {"id": 1})
    h.clock.advance(7200)

    assert h.drive(run_id) == "completed"


def test_a_wait_past_the_last_recordable_instant_fails_the_run_after_now_observed(
    clocked: Harness,
) -> None:
    h = clocked
    run_id = h.run(cooloff(18446744073709551615), {"id": 1})

    assert h.state(run_id) == "failed"
    assert h.kinds(run_id)[-3:] == ["NodeEntered", "NowObserved", "RunFailed"]
    assert h.last(run_id)[1] == {
        "error": "delay node `cooloff`: a wait of 18446744073709551615 seconds ends after "
        "9999-12-31T23:59:59Z, the last instant this server can record",
        "code": "limit_exceeded",
        "node": "cooloff",
    }


def test_a_sleeping_run_may_be_abandoned_and_nothing_wakes_it_after(clocked: Harness) -> None:
    h = clocked
    run_id = h.run(cooloff(60), {"id": 1})
    h.abandon(run_id, reason="not needed")
    h.clock.advance(120)

    assert h.drive(run_id) == "abandoned"
    assert "SleepCompleted" not in h.kinds(run_id)


def test_the_state_table_lets_a_sleeping_run_wake_end_or_fail_and_nothing_else() -> None:
    check_transition("running", "sleeping")
    for target in ("running", "abandoned", "failed"):
        check_transition("sleeping", target)
    with pytest.raises(TransitionRefused):
        check_transition("sleeping", "completed")
    with pytest.raises(TransitionRefused):
        check_append_states("sleeping", ["NodeEntered"], "running")  # work while asleep
    with pytest.raises(TransitionRefused):
        check_append_states("running", ["SleepCompleted"], "running")  # nothing to wake
    assert RunState("sleeping") is RunState.SLEEPING


def test_overdue_is_said_only_once_past_wake_at_in_whole_seconds() -> None:
    status = {"state": "sleeping", "wake_at": "2026-09-01T13:00:00.000000Z", "node": "d"}

    assert with_overdue(status, datetime(2026, 9, 1, 13, 0, 0, tzinfo=UTC)) == status
    assert with_overdue(status, datetime(2026, 9, 1, 13, 0, 2, 900000, tzinfo=UTC)) == {
        **status,
        "overdue": True,
        "overdue_seconds": 2,
    }
    assert with_overdue({"state": "running"}, START) == {"state": "running"}


def test_a_log_read_back_gives_the_sleeping_status(clocked: Harness) -> None:
    h = clocked
    run_id = h.run(cooloff(5), {"id": 1})

    assert run_status(h.store.events[run_id])["state"] == "sleeping"


def test_the_run_page_trace_marks_a_sleeping_delay_waiting_and_a_woken_one_done(
    clocked: Harness,
) -> None:
    h = clocked
    document = cooloff(60)
    run_id = h.run(document, {"id": 1})

    asleep = run_trace(document, h.store.events[run_id], h.state(run_id))
    assert asleep.marks[((), "cooloff")].state == "waiting"
    assert ((), "publish") not in asleep.marks

    h.clock.advance(60)
    h.drive(run_id)
    woken = run_trace(document, h.store.events[run_id], h.state(run_id))
    assert woken.marks[((), "cooloff")].state == "done"


def test_a_fork_after_a_completed_delay_keeps_its_wait_and_one_from_the_delay_waits_afresh(
    clocked: Harness,
) -> None:
    h = clocked
    document = cooloff(60)
    origin = h.run(document, {"id": 1})
    h.clock.advance(60)
    h.drive(origin)
    h.clock.advance(1000)

    after = h.fork(origin, "publish")
    assert h.drive(after) == "completed"
    assert h.of(after, "NowObserved") == h.of(origin, "NowObserved")  # recorded, not re-read
    assert h.kinds(after).count("SleepCompleted") == 1

    again = h.fork(origin, "cooloff")
    assert h.drive(again) == "sleeping"
    assert h.of(again, "NowObserved") == [{"now": "2026-09-01T12:17:40.000000Z"}]
    assert h.store.status(again)["wake_at"] == "2026-09-01T12:18:40.000000Z"  # the full wait
