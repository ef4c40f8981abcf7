"""``POST /v1/runs/{id}/fork`` and ``GET /v1/runs/{id}/forks`` (spec 05), in process: a fork
opens with its origin's log below a node, replays it and drives from there; recorded writes
need acknowledging; the refusals create nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from editor.models import Run
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import (
    GATED,
    drive,
    events_of,
    park,
    run_of,
    start,
    store,
)
from tests.integration.runs.fork_tools import FLAKY, WRITING, calls

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fork_tools(settings: Any) -> Iterator[None]:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    try:
        yield
    finally:
        tools.cache_clear()


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, str]:
    return {"calls": str(tmp_path / "calls"), "marker": str(tmp_path / "marker")}


def fork(caller: Caller, run_id: str, **body: Any) -> Any:
    return caller.post(f"/v1/runs/{run_id}/fork", body)


def test_a_fork_of_a_failed_run_from_its_failed_node_completes_without_redoing_the_rest(
    api: Caller, operator_api: Caller, notes: dict[str, str]
) -> None:
    origin = start(operator_api, store(api, FLAKY), input=notes, labels={"team": "tea"})
    assert drive(origin) == "failed"
    origin_events = events_of(operator_api, origin)
    entry = next(e["seq"] for e in origin_events if e["event"]["payload"].get("node") == "b")

    response = fork(operator_api, origin, from_node="b")

    assert response.status_code == 201, response.content
    made = response.json()
    assert made["status"] == "running"
    assert made["forked_from"] == {
        "run_id": origin,
        "through_seq": entry - 1,
        "from_node": "b",
        "graph_hash": run_of(operator_api, origin)["graph_hash"],
        "acknowledged_writes": [],
    }
    child = made["run"]
    assert drive(child) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 1, "b": 2, "c": 1}
    shown = run_of(operator_api, child)
    assert shown["forked_from"] == made["forked_from"]
    assert shown["labels"] == {"team": "tea"}
    child_events = events_of(operator_api, child)
    assert child_events[0]["event"]["payload"]["forked_from"] == made["forked_from"]
    assert [e["event"] for e in child_events[1:entry]] == [
        e["event"] for e in origin_events[1:entry]
    ]
    assert "forked_from" not in run_of(operator_api, origin)
    graph = operator_api.get(f"/v1/runs/{child}/graph").json()
    assert graph["forked_from"] == made["forked_from"]

    listed = operator_api.get(f"/v1/runs/{origin}/forks").json()
    assert listed["run"] == origin and listed["derived"] is True
    assert [(f["run"], f["from_node"], f["through_seq"]) for f in listed["forks"]] == [
        (child, "b", entry - 1)
    ]
    assert operator_api.get(f"/v1/runs/{child}/forks").json()["forks"] == []


def test_a_fork_over_a_write_is_refused_until_it_is_acknowledged(
    api: Caller, operator_api: Caller, notes: dict[str, str]
) -> None:
    origin = start(operator_api, store(api, WRITING), input=notes)
    assert drive(origin) == "completed"
    write = next(
        e
        for e in events_of(operator_api, origin)
        if e["event"]["kind"] == "ToolCallRequested" and e["event"]["payload"]["tool"] == "sends"
    )
    runs_before = Run.objects.count()

    preview = fork(operator_api, origin, from_node="a", dry_run=True)
    refused = fork(operator_api, origin, from_node="a")

    listed = {
        "seq": write["seq"],
        "tool": "sends",
        "input": notes,
        "idempotency_key": None,
        "recorded_at": write["recorded_at"],
    }
    assert preview.status_code == 200
    assert preview.json() == {
        "origin": origin,
        "from_node": "a",
        "through_seq": 0,
        "graph_hash": write and run_of(operator_api, origin)["graph_hash"],
        "prefix_event_count": 1,
        "writes": [listed],
        "unacknowledged_writes": [write["seq"]],
        "would_proceed": False,
    }
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "write_replay_hazard"
    assert error_of(refused)["details"] == {"writes": [listed]}
    assert Run.objects.count() == runs_before

    made = fork(operator_api, origin, from_node="a", acknowledge_writes=[write["seq"]])
    assert made.status_code == 201, made.content
    assert made.json()["forked_from"]["acknowledged_writes"] == [write["seq"]]
    assert drive(made.json()["run"]) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 2, "send": 2, "after": 2}


@pytest.mark.parametrize(
    ("node", "message"),
    [("nowhere", "never entered node `nowhere`"), ("publish", "never entered node `publish`")],
)
def test_a_fork_from_a_node_the_run_never_entered_is_refused(
    api: Caller, operator_api: Caller, node: str, message: str
) -> None:
    origin = start(operator_api, store(api, GATED), input={"draft": "x"})
    assert drive(origin) == "suspended"
    before = Run.objects.count()

    response = fork(operator_api, origin, from_node=node, dry_run=True)
    made = fork(operator_api, origin, from_node=node)

    for refused in (response, made):
        assert refused.status_code == 400
        assert error_of(refused)["code"] == "invalid_fork_node"
        assert message in error_of(refused)["message"]
        assert error_of(refused)["details"] == {"node": node}
    assert Run.objects.count() == before


def test_a_parked_run_may_be_forked_before_its_gate(api: Caller, operator_api: Caller) -> None:
    origin = start(operator_api, store(api, GATED), input={"draft": "x"})
    assert drive(origin) == "suspended"
    made = fork(operator_api, origin, from_node="review")
    assert made.status_code == 201, made.content
    assert drive(made.json()["run"]) == "suspended"


def test_a_run_waiting_for_a_reconciliation_or_still_moving_cannot_be_forked(
    api: Caller, operator_api: Caller
) -> None:
    graph = store(api, GATED)
    waiting = start(operator_api, graph, input={"draft": "x"})
    park(waiting, "reconciliation")
    queued = start(operator_api, graph, input={"draft": "y"})

    reconciling = fork(operator_api, waiting, from_node="write")
    moving = fork(operator_api, queued, from_node="write")

    assert reconciling.status_code == 409
    assert error_of(reconciling)["code"] == "origin_needs_reconciliation"
    assert error_of(reconciling)["details"]["intent"]["tool"] == "http_request"
    assert moving.status_code == 409
    assert error_of(moving)["code"] == "wrong_state"
    assert "still moving" in error_of(moving)["message"]


def test_only_operators_fork_and_anyone_signed_in_lists_forks(
    api: Caller, operator_api: Caller, reader: Caller
) -> None:
    origin = start(operator_api, store(api, GATED), input={"draft": "x"})
    assert drive(origin) == "suspended"

    refused = fork(reader, origin, from_node="write", dry_run=True)
    unknown = fork(operator_api, "00000000-0000-0000-0000-000000000000", from_node="write")
    listed = reader.get(f"/v1/runs/{origin}/forks")

    assert refused.status_code == 403 and error_of(refused)["code"] == "forbidden"
    assert unknown.status_code == 404 and error_of(unknown)["code"] == "unknown_run"
    assert listed.status_code == 200 and listed.json()["forks"] == []
    assert reader.get("/v1/runs/not-a-run/forks").status_code == 404


def test_a_fork_body_is_checked(api: Caller, operator_api: Caller) -> None:
    origin = start(operator_api, store(api, GATED), input={"draft": "x"})
    assert drive(origin) == "suspended"
    for body in ({}, {"from_node": ""}, {"from_node": "write", "acknowledge_writes": ["x"]}):
        response = operator_api.post(f"/v1/runs/{origin}/fork", body)
        assert response.status_code == 400, body
        assert error_of(response)["code"] == "bad_request"
